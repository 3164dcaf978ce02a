// How one computation is evaluated: the order of steps, the elementwise
// regions they form, and when each value can be released.
//
// A step is one instruction or one elementwise region (run at the position
// of its last member). Regions grow while no instruction outside them has
// read any of their members, which keeps every step's inputs evaluated
// before it. After step i the values listed in release_after[i] have no
// later reader and are dropped, so a long computation does not hold every
// intermediate.
//
// BuildComputationPlan fails (naming the instruction) when an elementwise op
// is not defined on its element type or has the wrong operand count. Plans
// are immutable; concurrent readers are fine.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "runtime/eval/elementwise_region.h"

namespace kiln::runtime {

struct ComputationPlan {
  struct Step {
    const hlo::Instruction* instr = nullptr;  // set for single-instruction steps
    int region = -1;                          // index into regions otherwise
  };
  std::vector<Step> steps;
  std::vector<ElementwiseRegion> regions;
  // Instruction indices (index_in_parent) whose values die after each step.
  std::vector<std::vector<int64_t>> release_after;
};

Result<std::unique_ptr<ComputationPlan>> BuildComputationPlan(const hlo::Computation& computation);

}  // namespace kiln::runtime
