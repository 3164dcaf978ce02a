// The autotuner's search space for one prepared module: which fusion
// decisions of the heuristic plan may be flipped (its profitability
// choices, never a legality refusal) and, per kernel, every legal tile
// (fusion::TileCandidates, the heuristic's choice first) with the analytic
// estimate of the kernel under each.
//
// Borrows the prepared module and the heuristic plan (keep both alive).
// Choices are memoized by the kernel's instructions, so the same kernel
// formed by two plans is analysed once. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/driver/plan_module.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/fusion/tiling.h"

namespace kiln::autotune {

// What may be chosen for one kernel (identified by its instructions).
struct KernelChoices {
  std::vector<fusion::TileChoice> tiles;  // tiles[0] is the largest fitting
  std::vector<double> analytic_us;        // the cost model's estimate per tile
  std::string kernel_class;               // CalibratedModel::ClassOf
  std::string root;                       // name of the first root
};

class SearchSpace {
 public:
  // `heuristic` must be PlanPrepared's heuristic plan of `prepared` on
  // options.chip.
  SearchSpace(const driver::PreparedModule& prepared, const driver::CompileOptions& options,
              const driver::CompiledPlan& heuristic);

  const fusion::FusionPlan& base() const { return heuristic_.plan; }
  const hlo::Computation& entry() const { return *prepared_.module->entry(); }
  // Indices of the base plan's edges that may be flipped, ascending.
  const std::vector<int64_t>& flippable() const { return flippable_; }

  // The kernels the base plan forms with `flips` flipped (their tiles the
  // largest fitting), or why it cannot: a flip that may not be made, a
  // fused edge that cannot fuse, a cycle, a kernel over the scoped VMEM.
  Result<std::vector<fusion::Kernel>> FormKernels(const std::vector<int64_t>& flips) const;

  // The tiles and estimates of `kernel`; stable for the space's lifetime.
  const KernelChoices& Choices(const fusion::Kernel& kernel);
  // The choices of a kernel Choices has seen, by its instructions; else null.
  const KernelChoices* Find(const std::vector<int64_t>& instructions) const;

 private:
  const driver::PreparedModule& prepared_;
  const driver::CompiledPlan& heuristic_;
  fusion::TilingOptions tiling_;
  std::vector<int64_t> flippable_;
  std::map<std::vector<int64_t>, std::unique_ptr<KernelChoices>> choices_;
};

}  // namespace kiln::autotune
