#include "runtime/eval/elementwise_region.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "base/host_cores.h"

namespace kiln::runtime {
namespace {

constexpr int64_t kCacheLineBytes = 64;

int64_t RoundUpToCacheLine(int64_t bytes) {
  return (bytes + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
}

// The member whose chunk holds member m's value: m itself, or for a copy
// read in place, the member it reads (-1 when that is a region input).
int StorageOf(const ElementwiseRegion& region, int m) {
  while (m >= 0 && region.members[m].alias_operand && !region.members[m].is_output) {
    m = region.members[m].sources[0];
  }
  return m;
}

// A region input as the loops see it: its data, or one chunk filled with its
// only element when it is splatted over the region.
struct InputView {
  const uint8_t* data = nullptr;
  int64_t width = 0;
  bool splat = false;
};

}  // namespace

void LayOutRegionScratch(ElementwiseRegion& region) {
  const int member_count = static_cast<int>(region.members.size());
  // The last member that reads each storage chunk.
  std::vector<int> last_reader(member_count, -1);
  for (int m = 0; m < member_count; ++m) {
    const ElementwiseRegion::Member& member = region.members[m];
    for (int64_t k = 0; k < member.instr->operand_count() && k < 3; ++k) {
      if (int owner = StorageOf(region, member.sources[k]); owner >= 0) {
        last_reader[owner] = std::max(last_reader[owner], m);
      }
    }
  }
  struct Slot {
    int64_t offset;
    int64_t bytes;
    int owner;
  };
  std::vector<Slot> slots;
  region.scratch_bytes = 0;
  for (int m = 0; m < member_count; ++m) {
    ElementwiseRegion::Member& member = region.members[m];
    member.scratch_offset = -1;
    if (member.is_output || member.alias_operand) continue;
    const int64_t bytes = RoundUpToCacheLine(
        kElementwiseChunk * hlo::HostByteWidth(member.instr->shape().element_type()));
    // Reuse a chunk of the same size whose value no member from m on reads.
    auto free_slot = std::find_if(slots.begin(), slots.end(), [&](const Slot& s) {
      return s.bytes == bytes && last_reader[s.owner] < m;
    });
    if (free_slot == slots.end()) {
      slots.push_back({region.scratch_bytes, bytes, m});
      region.scratch_bytes += bytes;
      free_slot = slots.end() - 1;
    }
    free_slot->owner = m;
    member.scratch_offset = free_slot->offset;
  }
}

Result<std::vector<hlo::Literal>> RunElementwiseRegion(
    const ElementwiseRegion& region, std::span<const hlo::Literal* const> inputs) {
  const int64_t count = region.element_count;
  const size_t member_count = region.members.size();

  std::vector<InputView> views(inputs.size());
  int64_t splat_bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlo::Literal& lit = *inputs[i];
    const int64_t n = lit.element_count();
    if (n != count && n != 1) {
      return InvalidArgumentError("instruction %" + std::string(region.inputs[i]->name()) + " has " +
                                  std::to_string(n) + " elements where an elementwise user expects " +
                                  std::to_string(count));
    }
    if (lit.elided()) {
      return InvalidArgumentError("instruction %" + std::string(region.inputs[i]->name()) +
                                  " is a constant without data ({...})");
    }
    views[i] = {lit.data().data(), hlo::HostByteWidth(lit.shape().element_type()),
                n == 1 && count != 1};
    if (views[i].splat) splat_bytes += RoundUpToCacheLine(kElementwiseChunk * views[i].width);
  }

  // Outputs are written in place; other members live in scratch chunks,
  // followed by the splatted inputs.
  std::vector<hlo::Literal> outputs;
  std::vector<uint8_t*> output_base(member_count, nullptr);
  std::vector<int64_t> member_width(member_count);
  for (size_t m = 0; m < member_count; ++m) {
    const hlo::Shape& shape = region.members[m].instr->shape();
    member_width[m] = hlo::HostByteWidth(shape.element_type());
    if (region.members[m].is_output) {
      outputs.push_back(hlo::Literal::Uninitialized(shape));  // every element is written
    }
  }
  for (size_t m = 0, o = 0; m < member_count; ++m) {
    if (region.members[m].is_output) output_base[m] = outputs[o++].mutable_data().data();
  }
  // Splatted inputs fill one chunk each, shared (read only) by every part.
  auto splats = std::make_unique_for_overwrite<uint8_t[]>(static_cast<size_t>(std::max<int64_t>(splat_bytes, 1)));
  int64_t splat_offset = 0;
  for (InputView& view : views) {
    if (!view.splat) continue;
    uint8_t* chunk = splats.get() + splat_offset;
    for (int64_t e = 0; e < kElementwiseChunk; ++e) {
      std::memcpy(chunk + e * view.width, view.data, static_cast<size_t>(view.width));
    }
    view.data = chunk;
    splat_offset += RoundUpToCacheLine(kElementwiseChunk * view.width);
  }

  // Chunks [first, last) with scratch of their own.
  auto run_chunks = [&](int64_t first, int64_t last) {
    auto scratch = std::make_unique_for_overwrite<uint8_t[]>(
        static_cast<size_t>(std::max<int64_t>(region.scratch_bytes, 1)));
    std::vector<uint8_t*> member_chunk(member_count);
    for (int64_t chunk = first; chunk < last; ++chunk) {
      const int64_t start = chunk * kElementwiseChunk;
      const int64_t n = std::min(kElementwiseChunk, count - start);
      for (size_t m = 0; m < member_count; ++m) {
        const ElementwiseRegion::Member& member = region.members[m];
        ElementwiseArgs args;
        args.n = n;
        const int64_t operand_count = member.instr->operand_count();
        for (int64_t k = 0; k < operand_count; ++k) {
          const int source = member.sources[k];
          if (source >= 0) {
            args.in[k] = member_chunk[source];
          } else {
            const InputView& view = views[-source - 1];
            args.in[k] = view.splat ? view.data : view.data + start * view.width;
          }
        }
        if (member.alias_operand && !member.is_output) {
          // A copy nobody outside sees: read the operand in place.
          member_chunk[m] = static_cast<uint8_t*>(const_cast<void*>(args.in[0]));
          continue;
        }
        member_chunk[m] = member.is_output ? output_base[m] + start * member_width[m]
                                           : scratch.get() + member.scratch_offset;
        args.out = member_chunk[m];
        member.kernel.Run(args);
      }
    }
  };
  // Large regions run as parts of kElementwisePartChunks chunks on the
  // calling thread and the host cores no chip holds (each element is
  // computed alone, so the result is the same however many ran).
  const int64_t chunks = (count + kElementwiseChunk - 1) / kElementwiseChunk;
  const int64_t parts = (chunks + kElementwisePartChunks - 1) / kElementwisePartChunks;
  if (parts <= 1) {
    run_chunks(0, chunks);
  } else {
    HostCores::Get().ParallelFor(parts, [&](int64_t part) {
      run_chunks(part * kElementwisePartChunks, std::min(chunks, (part + 1) * kElementwisePartChunks));
    });
  }
  return outputs;
}

}  // namespace kiln::runtime
