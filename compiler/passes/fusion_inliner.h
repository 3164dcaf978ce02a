// FusionInliner: expands XLA `fusion` instructions back into the
// instructions of their fused computations, so that a module dumped after
// XLA's optimizations can be planned from scratch (plans `none` and
// `heuristic`) and compared with XLA's own fusion (plan `given`, which
// skips this pass).
//
// Each fusion's fused computation is cloned into the caller in its place
// (parameters become the fusion's operands; clones are named
// "<fusion>.<inner>", made unique), users are redirected to the clone of
// the fused root, and the fusion is left for DCE. Fusions with control
// predecessors are kept. The fused computations stay in the module,
// unused. Stateless; thread-safe across modules.
#pragma once

#include "compiler/passes/pass.h"

namespace kiln::passes {

class FusionInliner : public Pass {
 public:
  std::string_view name() const override { return "defuse"; }
  Result<bool> Run(hlo::Module& module) override;
};

// Inlines the fusions of one computation; true when any was inlined.
Result<bool> InlineFusions(hlo::Computation& computation);

}  // namespace kiln::passes
