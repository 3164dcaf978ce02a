#include "runtime/eval/elementwise_region.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace kiln::runtime {
namespace {

// Elements per chunk: small enough that a region's temporaries stay in L1/L2,
// large enough to amortize one indirect call per member per chunk.
constexpr int64_t kChunk = 1024;
// Bytes per element of the widest host type (c128).
constexpr int64_t kMaxElementBytes = 16;

}  // namespace

Result<std::vector<hlo::Literal>> RunElementwiseRegion(
    const ElementwiseRegion& region, std::span<const hlo::Literal* const> inputs) {
  const int64_t count = region.element_count;
  const size_t member_count = region.members.size();

  // Where each input is read from: its data, or a chunk filled with its one
  // element when it must be splatted.
  std::vector<const uint8_t*> input_data(inputs.size());
  std::vector<int64_t> input_width(inputs.size());
  std::vector<bool> input_splat(inputs.size());
  int64_t splat_count = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlo::Literal& lit = *inputs[i];
    const int64_t n = lit.element_count();
    if (n != count && n != 1) {
      return MakeError("instruction %" + region.inputs[i]->name() + " has " + std::to_string(n) +
                       " elements where an elementwise user expects " + std::to_string(count));
    }
    if (lit.elided()) {
      return MakeError("instruction %" + region.inputs[i]->name() +
                       " is a constant without data ({...})");
    }
    input_data[i] = lit.data().data();
    input_width[i] = hlo::HostByteWidth(lit.shape().element_type());
    input_splat[i] = n == 1 && count != 1;
    if (input_splat[i]) ++splat_count;
  }

  // Outputs are written in place; other members live in scratch chunks.
  std::vector<hlo::Literal> outputs;
  std::vector<uint8_t*> member_base(member_count, nullptr);  // output data
  std::vector<int64_t> member_width(member_count);
  std::vector<int64_t> scratch_slot(member_count, -1);
  int64_t scratch_count = splat_count;
  for (size_t m = 0; m < member_count; ++m) {
    const hlo::Shape& shape = region.members[m].instr->shape();
    member_width[m] = hlo::HostByteWidth(shape.element_type());
    if (region.members[m].is_output) {
      outputs.emplace_back(shape);
    } else {
      scratch_slot[m] = scratch_count++;
    }
  }
  for (size_t m = 0, o = 0; m < member_count; ++m) {
    if (region.members[m].is_output) member_base[m] = outputs[o++].mutable_data().data();
  }
  std::vector<uint8_t> scratch(static_cast<size_t>(scratch_count * kChunk * kMaxElementBytes));
  auto slot = [&](int64_t s) { return scratch.data() + s * kChunk * kMaxElementBytes; };

  std::vector<const uint8_t*> splat_chunk(inputs.size(), nullptr);
  for (size_t i = 0, s = 0; i < inputs.size(); ++i) {
    if (!input_splat[i]) continue;
    uint8_t* chunk = slot(static_cast<int64_t>(s++));
    for (int64_t e = 0; e < kChunk; ++e) {
      std::memcpy(chunk + e * input_width[i], input_data[i], input_width[i]);
    }
    splat_chunk[i] = chunk;
  }

  std::vector<uint8_t*> member_chunk(member_count);
  for (int64_t start = 0; start < count; start += kChunk) {
    const int64_t n = std::min(kChunk, count - start);
    for (size_t m = 0; m < member_count; ++m) {
      const ElementwiseRegion::Member& member = region.members[m];
      member_chunk[m] = member.is_output ? member_base[m] + start * member_width[m]
                                         : slot(scratch_slot[m]);
      ElementwiseArgs args;
      args.n = n;
      args.out = member_chunk[m];
      const int64_t operand_count = member.instr->operand_count();
      for (int64_t k = 0; k < operand_count; ++k) {
        const int source = member.sources[k];
        if (source >= 0) {
          args.in[k] = member_chunk[source];
        } else {
          const int input = -source - 1;
          args.in[k] = input_splat[input] ? splat_chunk[input]
                                          : input_data[input] + start * input_width[input];
        }
      }
      if (member.alias_operand && !member.is_output) {
        member_chunk[m] = static_cast<uint8_t*>(const_cast<void*>(args.in[0]));
        continue;  // a copy nobody outside sees: read the operand in place
      }
      member.kernel.Run(args);
    }
  }
  return outputs;
}

}  // namespace kiln::runtime
