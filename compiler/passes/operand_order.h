// The order contract between passes and everything after them: every
// computation lists each instruction after its operands and its control
// predecessors. The parser produces that order; a pass that appends
// instructions (an expansion, a rewrite) may leave users before them, and
// the verifier accepts any acyclic order. The fusion planner, the kernel
// schedule and the sibling search rely on operands coming first, so the
// pass pipeline restores the order after every pass.
//
// Pure functions of the computation; not thread-safe for one computation.
#pragma once

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/module.h"

namespace kiln::passes {

// True when every instruction of `computation` comes after its operands and
// control predecessors.
bool OperandsComeFirst(const hlo::Computation& computation);

// Reorders `computation` so that operands and control predecessors come
// first, moving as little as it can: instructions keep their relative order
// unless one must follow an operand placed after it. True when it changed
// the order; an error (nothing changed) on a cycle.
Result<bool> PlaceOperandsFirst(hlo::Computation& computation);

// PlaceOperandsFirst over every computation of `module`.
Result<bool> PlaceOperandsFirst(hlo::Module& module);

}  // namespace kiln::passes
