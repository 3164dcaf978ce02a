// An elementwise region: connected elementwise instructions of one
// computation with equal dimensions, evaluated together chunk by chunk so
// that values used only inside the region never exist as whole arrays.
//
// BuildElementwiseRegions (computation_plan.cc) forms regions;
// RunElementwiseRegion computes a region's outputs from its inputs. Inputs
// must have the region's element count or one element (splatted). Regions
// are immutable after planning and may be run concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/status.h"
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
  };
  std::vector<Member> members;                 // operand-before-user order
  std::vector<const hlo::Instruction*> inputs;  // values from outside
  int64_t element_count = 0;

  static int InputSource(int input) { return -(input + 1); }
};

// Evaluates the region; returns one literal per output member, in member
// order. `inputs[i]` is the value of region.inputs[i].
Result<std::vector<hlo::Literal>> RunElementwiseRegion(const ElementwiseRegion& region,
                                                       std::span<const hlo::Literal* const> inputs);

}  // namespace kiln::runtime
