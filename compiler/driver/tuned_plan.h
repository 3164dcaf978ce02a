// Plans the autotuner chose: the heuristic plan of a prepared module with
// some of its profitability decisions flipped and some kernels' tiles
// replaced, planned (PlanTuned) or planned and lowered (LowerTuned) as
// PlanKind::kTuned under the key of the heuristic compile, so the tuned
// executable replaces the heuristic one under that key.
//
// Every edit is checked: a flip must name an edge of the base plan whose
// decision is a profitability choice (a legality refusal is never flipped),
// the kernels are formed again from the edited edges (FormKernels: a
// fused edge that cannot fuse, a cycle or a kernel over the scoped VMEM is
// an error), and each replaced tile must belong to a kernel of the edited
// plan and pass ValidateTile; a kernel order must name kernels of the edited
// plan. Buffers are then assigned again. Errors name
// the edit at fault; nothing is partly applied.
//
// Pure functions of their arguments; thread-safe for one prepared module.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "base/status.h"
#include "compiler/driver/compile_module.h"
#include "compiler/driver/plan_module.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/fusion/fusion_plan.h"

namespace kiln::driver {

struct PlanEdits {
  // Indices into the base plan's edges whose `fused` is flipped; sorted or
  // not, each at most once.
  std::vector<int64_t> flipped_edges;
  // Tiles by kernel, the kernel named by its instructions (entry indices,
  // sorted, as fusion::Kernel::instructions). Other kernels keep the
  // largest fitting tile.
  std::map<std::vector<int64_t>, fusion::TileChoice> tiles;
  // Flips in loop bodies and branches (body_fusion.h): LowerTuned fuses
  // them again with these (WithBodyFlips) unless the prepared module
  // already has them; PlanTuned needs a prepared module that has them.
  fusion::BodyFlips body_flips;
  // The entry's kernels in the order the tuner prefers, by instructions (as
  // `tiles`): PlanTuned runs them in the valid order closest to it
  // (fusion::ReorderKernels), which the executable keeps and the simulator
  // times. Empty: the heuristic's order.
  std::vector<std::vector<int64_t>> kernel_order;
  bool operator==(const PlanEdits&) const = default;
};

// `base` must be the heuristic plan PlanPrepared made of `prepared` with
// `options` (options.plan heuristic).
Result<CompiledPlan> PlanTuned(const PreparedModule& prepared, const CompileOptions& options,
                               const fusion::FusionPlan& base, const PlanEdits& edits);

// PlanTuned then LowerPlanned: the executable's plan is "tuned", its key
// the heuristic compile's.
Result<CompileOutput> LowerTuned(const PreparedModule& prepared, const CompileOptions& options,
                                 const fusion::FusionPlan& base, const PlanEdits& edits);

}  // namespace kiln::driver
