// PassPipeline: runs passes in order over one module, optionally verifying
// the module after each pass (on in test builds, where NDEBUG is not
// defined, and wherever PipelineOptions::verify is set).
//
// After every pass that changed the module, each computation is put back
// in operands-first order (operand_order.h), which the planner relies on:
// a pass may append instructions anywhere.
//
// Owns its passes. Errors name the pass: "pass cse: ..." for a failing pass,
// "after pass cse: <verifier message>" when a pass leaves invalid IR.
// Not thread-safe (passes may keep scratch state); use one pipeline per
// thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/pass.h"

namespace kiln::passes {

struct PipelineOptions {
#ifdef NDEBUG
  bool verify = false;
#else
  bool verify = true;
#endif
  // Runs the whole pipeline again while anything changed, at most this many
  // times in total (>= 1).
  int max_iterations = 2;
};

class PassPipeline {
 public:
  explicit PassPipeline(PipelineOptions options = {}) : options_(options) {}

  void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  template <typename P, typename... Args>
  P& Add(Args&&... args) {
    auto pass = std::make_unique<P>(std::forward<Args>(args)...);
    P& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  // True when any pass changed the module.
  Result<bool> Run(hlo::Module& module);

  // Names of the passes that changed something, in run order.
  const std::vector<std::string>& changed_passes() const { return changed_; }

 private:
  PipelineOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<std::string> changed_;
};

// The standard pipeline: batch-norm expander, algebraic simplifier, CSE,
// layout assignment, layout bitcasts, DCE;
// preceded by the FusionInliner and CallInliner when `inline_fusions`
// (plans that ignore XLA's fusions).
PassPipeline MakeDefaultPipeline(PipelineOptions options = {}, bool inline_fusions = false);

}  // namespace kiln::passes
