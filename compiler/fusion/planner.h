// The fusion planner: makes the edges of a FusionPlan for the entry
// computation under a PlanKind, then forms kernels and tiles
// (kernel_formation.h).
//
//  - none: every edge refused; every kernel-forming instruction (scalar
//    broadcasts included) is its own kernel.
//  - heuristic: XLA-like. Loop fusion of elementwise chains with their
//    broadcasts and data movement; input fusion of a reduction with its
//    producers; output fusion of a dot/convolution, and of a window op
//    (depthwise convolution, reduce-window), with its elementwise
//    epilogue; then multi-output fusion of sibling loop/input kernels that
//    read the same value and iterate over the same shape. It refuses, with a
//    reason on the edge, fusions that would recompute expensive work (an
//    expensive producer with several consumers, or a consumer that re-reads
//    each element, like an expanding broadcast), exceed the kernel limits
//    below, or not fit the scoped VMEM even with the smallest blocks (unless
//    the kernel is over it already and the producer shrinks it).
//  - given: for modules after XLA's optimizations; every edge refused, so
//    each XLA `fusion` instruction is one kernel (kind kGiven) and the
//    remaining instructions are single kernels.
// Control flow (while, conditional, and the calls the CallInliner left)
// is opaque here: its own kernel. For the heuristic and tuned plans its
// bodies and branches were planned and fused beforehand (body_fusion.h).
//
// Stateless; thread-safe. Errors come from kernel formation only.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/fusion/tiling.h"
#include "compiler/hlo/computation.h"

namespace kiln::fusion {

struct PlannerOptions {
  TilingOptions tiling;
  int64_t max_kernel_instructions = 256;  // instructions per fused kernel
  int64_t max_kernel_inputs = 32;         // arrays one fused kernel reads
  // Kernels one cheap non-broadcast producer may be computed in, and
  // consumers it may have, before it is materialized instead. Broadcasts
  // have no limit: reading their operand costs less than reading them.
  int64_t max_duplication = 8;
  // A consumer that re-reads each element of a producer at least twice
  // only fuses it when it is cheap and smaller than this.
  int64_t reread_limit_bytes = 1 << 20;
  // Multi-output fusion only considers shared values of at least this size
  // (never constants), and at most this many reading kernels per value.
  int64_t sibling_min_shared_bytes = 4096;
  int64_t max_sibling_candidates = 16;
  // Whether a contraction's kernel runs on the blocks the plan's tile
  // chooses (entry kernels) or is tiled on its own when timed (the steps of
  // a loop body or branch, runtime/timing/kernel_timer.cc). Only in the
  // first case is a prologue refused for the smaller blocks its inputs
  // leave the contraction.
  bool contractions_run_on_plan_tiles = true;
};

Result<FusionPlan> PlanComputation(const hlo::Computation& computation, PlanKind kind,
                                   const PlannerOptions& options);

// The heuristic's edge decisions only (kernels not formed).
std::vector<FusionEdge> HeuristicEdges(const hlo::Computation& computation,
                                       const PlannerOptions& options);

}  // namespace kiln::fusion
