#include "compiler/autotune/search_space.h"

#include "compiler/autotune/calibrated_model.h"
#include "compiler/cost/cost_model.h"
#include "compiler/driver/tuned_plan.h"
#include "compiler/fusion/kernel_formation.h"

namespace kiln::autotune {

SearchSpace::SearchSpace(const driver::PreparedModule& prepared, const driver::CompileOptions& options,
                         const driver::CompiledPlan& heuristic)
    : prepared_(prepared), heuristic_(heuristic), tiling_(driver::TilingOptionsFor(options, *heuristic.chip)) {
  for (size_t e = 0; e < heuristic.plan.edges.size(); ++e) {
    if (heuristic.plan.edges[e].kind == fusion::DecisionKind::kProfitability) {
      flippable_.push_back(static_cast<int64_t>(e));
    }
  }
}

Result<std::vector<fusion::Kernel>> SearchSpace::FormKernels(const std::vector<int64_t>& flips) const {
  fusion::FusionPlan plan;
  plan.kind = fusion::PlanKind::kTuned;
  KILN_ASSIGN_OR_RETURN(plan.edges, fusion::FlipEdges(heuristic_.plan, flips));
  KILN_RETURN_IF_ERROR(fusion::FormKernels(entry(), tiling_, plan));
  return std::move(plan.kernels);
}

const KernelChoices* SearchSpace::Find(const std::vector<int64_t>& instructions) const {
  auto it = choices_.find(instructions);
  return it == choices_.end() ? nullptr : it->second.get();
}

const KernelChoices& SearchSpace::Choices(const fusion::Kernel& kernel) {
  std::unique_ptr<KernelChoices>& slot = choices_[kernel.instructions];
  if (slot) return *slot;
  slot = std::make_unique<KernelChoices>();
  KernelChoices& c = *slot;
  c.kernel_class = CalibratedModel::ClassOf(entry(), kernel);
  c.root = entry().instructions()[kernel.roots.front()]->name();
  Result<std::vector<fusion::TileChoice>> tiles =
      fusion::TileCandidates(fusion::MakeTilingProblem(entry(), kernel), tiling_);
  // FormKernels gave the kernel its tile: the first candidate, or untiled
  // when nothing fits a single instruction.
  c.tiles = tiles ? *std::move(tiles) : std::vector<fusion::TileChoice>{kernel.tile};
  if (c.tiles.empty() || c.tiles.front() != kernel.tile) c.tiles.insert(c.tiles.begin(), kernel.tile);
  fusion::Kernel probe = kernel;
  for (const fusion::TileChoice& tile : c.tiles) {
    probe.tile = tile;
    c.analytic_us.push_back(cost::EstimateKernel(entry(), probe, *heuristic_.chip).seconds * 1e6);
  }
  return c;
}

}  // namespace kiln::autotune
