// CommonSubexpressionElimination: merges identical instructions.
//
// Two instructions are identical when they have the same opcode, exact
// shape (layout included), the same operands in the same order, equal
// semantic attributes (canonical text; metadata and other non-semantic
// attributes ignored; computation references by identity) and, for
// constants, equal literals. Instructions with side effects or control
// predecessors, parameters, custom calls and elided constants are never
// merged (side_effects.h). Users of the later instruction are redirected to
// the earlier one; the later one is left for DCE. Stateless; thread-safe
// across modules.
#pragma once

#include "compiler/passes/pass.h"

namespace kiln::passes {

class CommonSubexpressionElimination : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  Result<bool> Run(hlo::Module& module) override;
};

// Runs CSE on one computation; true when any instruction was merged.
Result<bool> EliminateCommonSubexpressions(hlo::Computation& computation);

}  // namespace kiln::passes
