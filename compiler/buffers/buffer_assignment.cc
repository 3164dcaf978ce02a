#include "compiler/buffers/buffer_assignment.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_set>

#include "compiler/buffers/address_line.h"
#include "compiler/buffers/in_place.h"
#include "compiler/buffers/offline_placement.h"
#include "compiler/fusion/block_layout.h"
#include "compiler/fusion/op_class.h"
#include "compiler/hlo/op_attributes.h"

namespace kiln::buffers {

using fusion::CollectSourceIds;
using fusion::FormatByteCount;
using fusion::FormatBytes;
using fusion::Kernel;
using fusion::SatAdd;
using fusion::ShapeBytes;
using hlo::Instruction;

namespace {

// Bytes of a shape in floating point: the true size of shapes whose byte
// count overflows int64 (ShapeBytes saturates).
double ShapeBytesReal(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) total += ShapeBytesReal(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  double bytes = hlo::HostByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    bytes *= static_cast<double>(std::max<int64_t>(d, d == hlo::kUnboundedDim ? 1 : 0));
  }
  return bytes;
}

// The peak overflowed int64: name the largest buffer and its true size
// instead of a saturated figure.
Error HugeProgramError(const hlo::Computation& computation, const BufferAssignment& out, int64_t hbm_bytes,
                       std::string_view chip_name, std::string_view advice) {
  const Instruction* largest = nullptr;
  double largest_bytes = 0;
  for (const Buffer& buffer : out.buffers) {
    const Instruction* instr = computation.instructions()[buffer.instruction].get();
    const double bytes = ShapeBytesReal(instr->shape());
    if (bytes > largest_bytes) {
      largest = instr;
      largest_bytes = bytes;
    }
  }
  std::string why =
      "program needs more than " + FormatBytes(std::numeric_limits<int64_t>::max()) + " of HBM at peak";
  if (largest != nullptr) {
    why += ": its largest buffer, %" + std::string(largest->name()) + " (" + largest->shape().ToString() +
           "), alone takes " + FormatByteCount(largest_bytes);
  }
  return ResourceExhaustedError(why + "; chip " + std::string(chip_name) + " has " + FormatBytes(hbm_bytes) +
                                std::string(advice));
}

// Re-places the temporaries largest first (offline_placement.h) when that
// ends the line lower than the scan did.
void PlaceLargestFirstWhenTighter(BufferAssignment& out) {
  std::vector<LiveRange> ranges;
  std::vector<int64_t> placed;
  for (size_t b = 0; b < out.buffers.size(); ++b) {
    const Buffer& buffer = out.buffers[b];
    if (buffer.slot < 0) continue;
    ranges.push_back({buffer.bytes, buffer.defined_at, buffer.last_use});
    placed.push_back(static_cast<int64_t>(b));
  }
  std::optional<Placement> offline = PlaceLargestFirst(ranges);
  if (!offline || offline->end >= out.slot_bytes) return;
  for (size_t i = 0; i < placed.size(); ++i) out.buffers[placed[i]].offset = offline->offsets[i];
  out.slot_bytes = offline->end;
}

// What the error of a program over HBM adds when the caller named other
// targets: the one with the least HBM that holds `peak`, or that none does.
std::string AlternativeAdvice(std::span<const HbmAlternative> alternatives, int64_t peak, int64_t own_hbm_bytes) {
  const HbmAlternative* fits = nullptr;
  const HbmAlternative* most = nullptr;
  for (const HbmAlternative& a : alternatives) {
    if (a.hbm_bytes >= peak && (fits == nullptr || a.hbm_bytes < fits->hbm_bytes)) fits = &a;
    if (most == nullptr || a.hbm_bytes > most->hbm_bytes) most = &a;
  }
  if (fits != nullptr) return "; it fits on " + fits->name + " (" + FormatBytes(fits->hbm_bytes) + ")";
  if (most != nullptr && most->hbm_bytes > own_hbm_bytes) {
    return "; no chip kind holds it: the most HBM is " + most->name + "'s " + FormatBytes(most->hbm_bytes);
  }
  if (most != nullptr) return "; no chip kind holds it: this one has the most HBM of any";
  return "";
}

// The largest temporaries live while kernel `at` runs, for the error a
// program over HBM gets: what to shard, rematerialise or donate first.
std::string LargestLiveAt(const hlo::Computation& computation, const BufferAssignment& out, int64_t at) {
  std::vector<const Buffer*> live;
  for (const Buffer& buffer : out.buffers) {
    const bool temporary = buffer.kind == Buffer::Kind::kTemporary || buffer.kind == Buffer::Kind::kOutput;
    if (temporary && buffer.bytes > 0 && buffer.defined_at <= at && buffer.last_use >= at) live.push_back(&buffer);
  }
  const size_t shown = std::min<size_t>(live.size(), 3);
  std::partial_sort(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(shown), live.end(),
                    [](const Buffer* a, const Buffer* b) {
                      return a->bytes != b->bytes ? a->bytes > b->bytes : a->instruction < b->instruction;
                    });
  std::string text;
  for (size_t i = 0; i < shown; ++i) {
    const Instruction& instr = *computation.instructions()[live[i]->instruction];
    text += (i ? ", %" : "%") + std::string(instr.name()) + " " + FormatBytes(live[i]->bytes);
  }
  return text;
}

}  // namespace

Result<BufferAssignment> AssignBuffers(const hlo::Computation& computation, const fusion::FusionPlan& plan,
                                       int64_t hbm_bytes, std::string_view chip_name,
                                       std::span<const OutputAlias> aliases,
                                       std::span<const HbmAlternative> alternatives) {
  const auto& instrs = computation.instructions();
  const int64_t n = computation.instruction_count();
  const int64_t kernel_count = static_cast<int64_t>(plan.kernels.size());
  BufferAssignment out;
  out.buffer_of.assign(n, -1);

  auto define = [&](int64_t i, Buffer::Kind kind, int64_t at) {
    Buffer b;
    b.kind = kind;
    b.instruction = i;
    b.bytes = ShapeBytes(instrs[i]->shape());
    b.defined_at = at;
    b.last_use = at;
    out.buffer_of[i] = static_cast<int64_t>(out.buffers.size());
    out.buffers.push_back(b);
  };
  for (int64_t i = 0; i < n; ++i) {
    hlo::Opcode op = instrs[i]->opcode();
    if (op == hlo::Opcode::kParameter) define(i, Buffer::Kind::kParameter, -1);
    if (op == hlo::Opcode::kConstant) define(i, Buffer::Kind::kConstant, -1);
  }
  for (const Kernel& kernel : plan.kernels) {
    for (int64_t r : kernel.roots) define(r, Buffer::Kind::kTemporary, kernel.id);
  }

  // Liveness: the last kernel reading each buffer.
  std::vector<int64_t> sources;
  for (const Kernel& kernel : plan.kernels) {
    for (int64_t i : kernel.inputs) {
      sources.clear();
      CollectSourceIds(instrs[i].get(), out.buffer_of, /*follow_control=*/false, sources);
      for (int64_t b : sources) {
        out.buffers[b].last_use = std::max(out.buffers[b].last_use, kernel.id);
      }
    }
  }
  if (computation.root() != nullptr) {
    sources.clear();
    CollectSourceIds(computation.root(), out.buffer_of, /*follow_control=*/false, sources);
    for (int64_t b : sources) {
      out.buffers[b].last_use = kernel_count;
      if (out.buffers[b].kind == Buffer::Kind::kTemporary) {
        out.buffers[b].kind = Buffer::Kind::kOutput;
      }
    }
  }

  ShareDyingOperands(computation, plan, out);
  WriteOutputsInPlace(computation, aliases, out);

  // Linear scan over the kernel order, best fit on one address line.
  std::vector<std::vector<int64_t>> defined_at(kernel_count), dies_at(kernel_count);
  for (size_t b = 0; b < out.buffers.size(); ++b) {
    Buffer& buffer = out.buffers[b];
    out.sum_buffer_bytes = SatAdd(out.sum_buffer_bytes, SatAdd(buffer.bytes, buffer.shared_bytes));
    if (buffer.kind == Buffer::Kind::kParameter) {
      out.parameter_bytes = SatAdd(out.parameter_bytes, buffer.bytes);
      buffer.last_use = kernel_count;
      continue;
    }
    if (buffer.kind == Buffer::Kind::kConstant) {
      out.constant_bytes = SatAdd(out.constant_bytes, buffer.bytes);
      buffer.last_use = kernel_count;
      continue;
    }
    if (buffer.bytes == 0) continue;
    defined_at[buffer.defined_at].push_back(static_cast<int64_t>(b));
    if (buffer.last_use < kernel_count) dies_at[buffer.last_use].push_back(static_cast<int64_t>(b));
  }
  // Best-fit placement on one address line (address_line.h). A buffer's
  // slot is the index of its start offset among the offsets used.
  AddressLine line;
  std::map<int64_t, int64_t> slot_of_offset;
  int64_t live = SatAdd(out.parameter_bytes, out.constant_bytes);
  out.max_live_bytes = live;
  int64_t peak_kernel = -1;  // where the most bytes are live
  for (int64_t k = 0; k < kernel_count; ++k) {
    for (int64_t b : defined_at[k]) {
      Buffer& buffer = out.buffers[b];
      buffer.offset = line.Allocate(buffer.bytes);
      auto [slot, added] = slot_of_offset.try_emplace(buffer.offset, static_cast<int64_t>(slot_of_offset.size()));
      buffer.slot = slot->second;
      live = SatAdd(live, buffer.bytes);
    }
    if (live > out.max_live_bytes) {
      out.max_live_bytes = live;
      peak_kernel = k;
    }
    for (int64_t b : dies_at[k]) {
      const Buffer& buffer = out.buffers[b];
      line.Free(buffer.offset, buffer.bytes);
      live -= buffer.bytes;
    }
  }
  out.slot_bytes = line.end();
  PlaceLargestFirstWhenTighter(out);
  slot_of_offset.clear();
  for (Buffer& buffer : out.buffers) {
    if (buffer.slot < 0) continue;
    auto [slot, added] = slot_of_offset.try_emplace(buffer.offset, static_cast<int64_t>(slot_of_offset.size()));
    buffer.slot = slot->second;
  }
  out.slot_count = static_cast<int64_t>(slot_of_offset.size());
  out.peak_bytes = SatAdd(SatAdd(out.parameter_bytes, out.constant_bytes), out.slot_bytes);
  if (out.peak_bytes == std::numeric_limits<int64_t>::max()) {
    return std::unexpected(HugeProgramError(computation, out, hbm_bytes, chip_name,
                                            AlternativeAdvice(alternatives, out.peak_bytes, hbm_bytes)));
  }
  if (out.peak_bytes > hbm_bytes) {
    return ResourceExhaustedError("program needs " + FormatBytes(out.peak_bytes) + " of HBM at peak (parameters " +
                                  FormatBytes(out.parameter_bytes) + ", constants " + FormatBytes(out.constant_bytes) +
                                  ", temporaries " + FormatBytes(out.slot_bytes) + ", at most " +
                                  FormatBytes(out.max_live_bytes) + " live at once" +
                                  (peak_kernel >= 0 ? ", the largest then " + LargestLiveAt(computation, out, peak_kernel)
                                                    : std::string()) +
                                  "); chip " + std::string(chip_name) + " has " + FormatBytes(hbm_bytes) +
                                  AlternativeAdvice(alternatives, out.peak_bytes, hbm_bytes));
  }
  return out;
}

}  // namespace kiln::buffers
