// Analytic cost model: a roofline per kernel.
//
// seconds = max(MXU flops / MXU rate, vector flops / vector rate,
//               HBM bytes / HBM bandwidth)
//           + grid steps x step overhead + launch overhead.
// MXU rate: bf16 peak for bf16/f16 operands and for f32 at DEFAULT
// precision (XLA's TPU default runs f32 dots as one bf16 pass); f32 at HIGH
// takes 3 passes and HIGHEST 6; 8-bit operands run at the int8 rate. HBM
// bytes are the kernel's inputs and outputs once each, except that tiled
// dot/convolution operands are re-read once per block column (lhs) or row
// (rhs). Elementwise ops cost 1 vector op per element (4 for
// transcendentals and division), reductions 1 per input element.
// Control-flow kernels move no data themselves and cost their called
// computations (each instruction as
// its own kernel): a while loop times its known_trip_count from
// backend_config (1 when absent), a conditional its most expensive branch.
// This is the planner's estimate, not the timing simulator.
//
// Pure functions; thread-safe.
#pragma once

#include <vector>

#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::cost {

struct KernelCost {
  double vector_flops = 0;
  double mxu_flops = 0;
  double hbm_bytes = 0;
  double seconds = 0;
};

struct PlanCost {
  std::vector<KernelCost> kernels;  // one per FusionPlan::kernels entry
  double seconds = 0;               // sum over kernels
  double estimated_us() const { return seconds * 1e6; }
};

KernelCost EstimateKernel(const hlo::Computation& computation, const fusion::Kernel& kernel,
                          const runtime::ChipSpec& chip);

PlanCost EstimatePlan(const hlo::Computation& computation, const fusion::FusionPlan& plan,
                      const runtime::ChipSpec& chip);

}  // namespace kiln::cost
