// An elementwise region: connected elementwise instructions of one
// computation with equal dimensions, evaluated together chunk by chunk so
// that values used only inside the region never exist as whole arrays.
//
// BuildComputationPlan (computation_plan.cc) forms regions and
// LayOutRegionScratch places their temporaries; RunElementwiseRegion computes
// a region's outputs from its inputs (a large region in parts over the idle
// host cores). Inputs must have the region's element count or one element
// (splatted). Regions are immutable after planning and may be run
// concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "runtime/eval/elementwise_kernel.h"

namespace kiln::runtime {

struct ElementwiseRegion {
  struct Member {
    const hlo::Instruction* instr = nullptr;
    ElementwiseKernel kernel;
    // Where each operand comes from: a member (index into members) when
    // >= 0, else input -(source + 1).
    std::array<int, 3> sources = {0, 0, 0};
    bool is_output = false;
    // The member's value is its operand's bytes (copy, broadcast of a
    // scalar, bitcast-convert): inside the region it reads them in place.
    bool alias_operand = false;
    // Where the member's chunk lives in the scratch buffer, in bytes; -1
    // when it is written to its output or read in place.
    int64_t scratch_offset = -1;
  };
  std::vector<Member> members;                 // operand-before-user order
  std::vector<const hlo::Instruction*> inputs;  // values from outside
  int64_t element_count = 0;
  // Bytes of scratch one chunk needs (members' chunks, reused once dead).
  int64_t scratch_bytes = 0;

  static int InputSource(int input) { return -(input + 1); }
};

// Elements evaluated per step: a region's live temporaries then stay in the
// first-level cache.
inline constexpr int64_t kElementwiseChunk = 512;
// Chunks a part of a large region runs; parts spread over idle host cores
// (base/host_cores.h).
inline constexpr int64_t kElementwisePartChunks = 128;

// Sets each member's scratch_offset and the region's scratch_bytes. A chunk
// is reused by a later member once every reader of its value has run.
void LayOutRegionScratch(ElementwiseRegion& region);

// Evaluates the region; returns one literal per output member, in member
// order. `inputs[i]` is the value of region.inputs[i].
Result<std::vector<hlo::Literal>> RunElementwiseRegion(const ElementwiseRegion& region,
                                                       std::span<const hlo::Literal* const> inputs);

}  // namespace kiln::runtime
