// DeadCodeElimination: deletes instructions whose values nothing needs.
//
// In every computation an instruction stays when it is the root, a
// parameter, has a side effect (side_effects.h), is a control predecessor of
// an instruction that stays, or is an operand of one that stays; everything
// else is removed (dead cycles included). Called computations are not
// removed. Stateless; thread-safe across modules.
#pragma once

#include "compiler/passes/pass.h"

namespace kiln::passes {

class DeadCodeElimination : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  Result<bool> Run(hlo::Module& module) override;
};

// Runs DCE on one computation; true when anything was removed.
Result<bool> RemoveDeadCode(hlo::Computation& computation);

}  // namespace kiln::passes
