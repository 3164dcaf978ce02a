// Inliners: expand `fusion` and `call` instructions into the instructions
// of the computations they call.
//
// FusionInliner expands XLA `fusion` instructions back, so that a module
// dumped after XLA's optimizations can be planned from scratch (plans
// `none` and `heuristic`) and compared with XLA's own fusion (plan `given`,
// which skips this pass).
//
// CallInliner expands `call` instructions, as XLA's CallInliner does before
// sharding propagation and fusion: JAX traces every jitted helper
// (`_where`, activations, pjit sub-functions) as a call, and a call left
// standing is a kernel boundary no real compiler keeps, where its results
// are written to HBM in full (a broadcast constant included) and its
// operands read back. Calls inside loop bodies and branches are expanded
// too. Callees are expanded leaves first, so inlining never adds call
// sites.
//
// Each expanded computation is cloned into the caller in its place
// (parameters become the instruction's operands; clones are named
// "<instruction>.<inner>", made unique), users are redirected to the clone
// of the called root, and the instruction is removed. Instructions
// with control predecessors, or that are some instruction's control
// predecessor, are kept. A call's `sharding` moves to the clone of its
// root when that clone has none. The called computations stay in the
// module, unused. Stateless; thread-safe across modules.
#pragma once

#include <cstdint>

#include "compiler/passes/pass.h"

namespace kiln::passes {

class FusionInliner : public Pass {
 public:
  std::string_view name() const override { return "defuse"; }
  Result<bool> Run(hlo::Module& module) override;
};

class CallInliner : public Pass {
 public:
  // Inlining adds at most `max_added_instructions` clones to the module;
  // calls past that stay calls (a chain of computations that each call the
  // next ten times would otherwise expand exponentially).
  explicit CallInliner(int64_t max_added_instructions = 20'000)
      : max_added_instructions_(max_added_instructions) {}
  std::string_view name() const override { return "inline-calls"; }
  Result<bool> Run(hlo::Module& module) override;

 private:
  int64_t max_added_instructions_;
};

// Inlines the fusions of one computation; true when any was inlined.
Result<bool> InlineFusions(hlo::Computation& computation);

}  // namespace kiln::passes
