// BatchNormExpander: rewrites batch-norm-training, batch-norm-inference and
// batch-norm-grad into the reductions and elementwise ops they stand for,
// as XLA's BatchNormExpander does before fusion, so that the planner fuses
// the statistics' two reductions and their per-feature math into one
// kernel (sibling and epilogue fusion), computes the scale and offset
// broadcasts inside their readers and fuses the normalisation into its
// consumers. An opaque kernel was timed as reading each array once, which
// no batch norm can do: its statistics are complete only after a whole
// pass over its input, and the normalisation takes a second.
//
// Per feature (every dimension but `feature_index`, N elements each):
//   training:  mean = sum(x) / N, var = sum(x*x) / N - mean^2 (one pass, as
//              XLA's expander), y = (x - mean) * rsqrt(var + eps) * scale
//              + offset; result (y, mean, var)
//   inference: y as above from the given mean and var
//   grad:      c0 = sum(dy), c1 = sum(dy * (x - mean)), r = rsqrt(var + eps),
//              dx = scale * r * (dy - c0 / N - (x - mean) * c1 * r^2 / N),
//              result (dx, c1 * r, c0)
// bf16 and f16 operands are computed in f32 and the results rounded once,
// as a TPU computes them inside a fusion (excess precision); f32 and f64
// stay in their own type. The tuple results are rebuilt with `tuple`, which
// the algebraic simplifier folds into the get-tuple-elements that read
// them; DCE removes the batch-norm op. A batch-norm whose operands are not
// arrays of one floating type, or whose attributes are bad, is left as it
// is (the verifier and the kernel report it). Stateless; thread-safe
// across modules.
#pragma once

#include "compiler/passes/pass.h"

namespace kiln::passes {

class BatchNormExpander : public Pass {
 public:
  std::string_view name() const override { return "batchnorm-expander"; }
  Result<bool> Run(hlo::Module& module) override;
};

}  // namespace kiln::passes
