#include "compiler/passes/pass_pipeline.h"

#include <algorithm>

#include "compiler/hlo/verifier.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/common_subexpression_elimination.h"
#include "compiler/passes/dead_code_elimination.h"
#include "compiler/passes/inliner.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/layout_bitcasts.h"
#include "compiler/passes/operand_order.h"

namespace kiln::passes {

Result<bool> PassPipeline::Run(hlo::Module& module) {
  changed_.clear();
  bool any_change = false;
  int iterations = std::max(1, options_.max_iterations);
  for (int iteration = 0; iteration < iterations; ++iteration) {
    bool changed_this_round = false;
    for (const auto& pass : passes_) {
      Result<bool> changed = pass->Run(module);
      if (!changed) {
        return changed.error().WithContext("pass " + std::string(pass->name()));
      }
      if (*changed) {
        changed_this_round = true;
        changed_.emplace_back(pass->name());
        Result<bool> reordered = PlaceOperandsFirst(module);
        if (!reordered) {
          Error broken = std::move(reordered.error());
          broken.code = ErrorCode::kInternal;  // a cycle: the pass broke the module
          return broken.WithContext("after pass " + std::string(pass->name()));
        }
      }
      if (options_.verify) {
        Status verified = hlo::VerifyModule(module);
        if (!verified) {
          Error broken = std::move(verified.error());
          broken.code = ErrorCode::kInternal;  // the pass broke a valid module: a bug
          return broken.WithContext("after pass " + std::string(pass->name()));
        }
      }
    }
    any_change |= changed_this_round;
    if (!changed_this_round) break;
  }
  return any_change;
}

PassPipeline MakeDefaultPipeline(PipelineOptions options, bool inline_fusions) {
  PassPipeline pipeline(options);
  if (inline_fusions) {
    pipeline.Add<FusionInliner>();
    pipeline.Add<CallInliner>();
  }
  pipeline.Add<BatchNormExpander>();
  pipeline.Add<AlgebraicSimplifier>();
  pipeline.Add<CommonSubexpressionElimination>();
  pipeline.Add<LayoutAssignment>();
  pipeline.Add<LayoutBitcasts>();
  pipeline.Add<DeadCodeElimination>();
  return pipeline;
}

}  // namespace kiln::passes
