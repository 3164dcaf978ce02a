// A pass rewrites a module in place: Run(module) -> changed, or an error.
//
// Passes own no IR; they mutate the module they are given through the
// mutation helpers of compiler/hlo (ReplaceAllUsesWith, RemoveInstructions,
// ReplaceOperandWith). A pass that fails may leave the module partly
// rewritten but always structurally valid. A pass object may be reused
// across modules; running it concurrently on different modules is safe
// unless its header says otherwise.
#pragma once

#include <string_view>

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  // Short name for logs and errors ("dce", "cse", "algsimp").
  virtual std::string_view name() const = 0;
  // True when the module changed.
  virtual Result<bool> Run(hlo::Module& module) = 0;
};

}  // namespace kiln::passes
