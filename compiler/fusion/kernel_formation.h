// Kernel formation: derives FusionPlan::kernels, root_kernel and the tiles
// from FusionPlan::edges (rules in fusion_plan.h), and validates edited
// plans.
//
// Errors name the edge or kernel at fault: "fused edge %add.3 -> %dot.1:
// consumer %dot.1 (dot) takes no fused producers", "fused edges form a
// cycle through the kernel of %mul.2", "kernel 4 (loop, root %add.9): ...".
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/fusion/tiling.h"
#include "compiler/hlo/computation.h"

namespace kiln::fusion {

// Replaces plan.kernels and plan.root_kernel with the kernels the edges
// describe, each with the largest fitting tile. A kernel of one instruction
// (or a given XLA fusion) that no block fits runs untiled; a fused kernel
// that does not fit is an error.
Status FormKernels(const hlo::Computation& computation, const TilingOptions& options,
                   FusionPlan& plan);

// Checks that plan.kernels are what the edges describe (instructions, roots,
// inputs, order) and that every tile is valid and fits the scoped VMEM.
Status ValidatePlan(const hlo::Computation& computation, const TilingOptions& options,
                    const FusionPlan& plan);

// `base`'s edges with `flips` (indices into them) flipped, for a plan the
// autotuner edits; an error names a flip out of range, repeated, or of a
// legality decision (never flipped).
Result<std::vector<FusionEdge>> FlipEdges(const FusionPlan& base, const std::vector<int64_t>& flips);

// Puts plan.kernels (formed) in the valid order closest to `preferred`,
// kernels named by their instructions (Kernel::instructions): listed
// kernels run as early as their dependencies allow, in the list's order,
// unlisted ones after them in their current order (ScheduleKernelsPreferring,
// kernel_schedule.h); ids and root_kernel follow. An error names a listed
// kernel the plan does not have or listed twice; the plan is then unchanged.
Status ReorderKernels(const hlo::Computation& computation, const std::vector<std::vector<int64_t>>& preferred,
                      FusionPlan& plan);

}  // namespace kiln::fusion
