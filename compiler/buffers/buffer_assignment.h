// Buffer assignment: HBM buffers for the values of a FusionPlan, reused
// across the kernel schedule by liveness.
//
// Buffers are defined by entry parameters (caller-owned, live for the whole
// program), constants (live for the whole program) and kernel roots (live
// from their kernel to the last kernel reading them; values the entry root
// returns live to the end). Free instructions (get-tuple-element, tuple,
// bitcast, ...) alias the buffers of their operands and extend their
// lives. A while's state and a dynamic-update-slice's result are made in
// place of operands that die at their kernel (in_place.h). Kernel buffers
// are placed by a linear scan over the kernel order:
// a kernel's outputs are allocated while its inputs are still live, then
// buffers whose last reader ran are freed. Placement is best fit on one
// address line with freed neighbours merged (address_line.h), so a freed
// block serves any later buffer that fits in it; then the same live ranges
// are placed again largest first (offline_placement.h) and that placement
// is kept when it ends lower. Peak HBM = parameters + constants + the end
// of that line.
//
// Pure function of its arguments; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/buffers/output_aliases.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"

namespace kiln::buffers {

struct Buffer {
  enum class Kind : uint8_t { kParameter, kConstant, kTemporary, kOutput };
  Kind kind = Kind::kTemporary;
  int64_t instruction = -1;  // defining value (entry index)
  int64_t bytes = 0;         // bytes allocated for the value: its size less shared_bytes
  int64_t shared_bytes = 0;  // bytes of dying operands it is made in place of (in_place.h)
  int64_t defined_at = -1;   // kernel position; -1 for parameters/constants
  int64_t last_use = -1;     // kernel position of the last reader
  int64_t slot = -1;         // reused slot; -1 for parameters/constants/empty
  int64_t offset = 0;        // byte offset of the slot in the temporaries area
};

struct BufferAssignment {
  std::vector<Buffer> buffers;
  // Entry index -> buffer it defines, or -1 (free aliases, fused values).
  std::vector<int64_t> buffer_of;
  int64_t parameter_bytes = 0;
  int64_t constant_bytes = 0;
  int64_t slot_bytes = 0;  // temporaries area: the end of the address line
  int64_t slot_count = 0;  // distinct start offsets used
  int64_t sum_buffer_bytes = 0;  // every buffer's bytes, as if none were reused
  int64_t peak_bytes = 0;        // parameter + constant + slot bytes
  int64_t max_live_bytes = 0;    // most bytes live after any kernel
};

// Fails when the peak exceeds `hbm_bytes`: "program needs 17.2 GiB of HBM
// at peak (parameters 4.0 GiB, constants 0 B, temporaries 13.2 GiB, at most
// 17.0 GiB live at once, the largest then %a 6.0 GiB, %b 2.0 GiB, %c 1.0
// GiB); chip v5e has 14.9 GiB" (the three largest temporaries live when
// the most bytes are).
// `aliases`: the module's input_output_alias (output_aliases.h); results it
// names are written into their donated parameters' memory.
// `alternatives`: other targets the caller could compile for; the error then
// names the one with the least HBM that holds the peak ("; it fits on v5p
// (88.5 GiB)") or says that none does ("; no chip kind holds it: the most
// HBM is tpu7x's 178.8 GiB").
struct HbmAlternative {
  std::string name;  // "v5p", "8 x v5p"
  int64_t hbm_bytes = 0;
};
Result<BufferAssignment> AssignBuffers(const hlo::Computation& computation, const fusion::FusionPlan& plan,
                                       int64_t hbm_bytes, std::string_view chip_name,
                                       std::span<const OutputAlias> aliases = {},
                                       std::span<const HbmAlternative> alternatives = {});


}  // namespace kiln::buffers
