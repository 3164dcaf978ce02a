#include "compiler/driver/tuned_plan.h"

#include <string>
#include <utility>

#include "compiler/driver/stopwatch.h"
#include "compiler/fusion/kernel_formation.h"
#include "compiler/fusion/tiling.h"

namespace kiln::driver {
namespace {

std::string Indices(const std::vector<int64_t>& instructions) {
  std::string out;
  for (int64_t i : instructions) out += (out.empty() ? "" : ",") + std::to_string(i);
  return "{" + out + "}";
}

// Replaces the tiles `edits` name; every one must match a formed kernel.
Status ApplyTiles(const hlo::Computation& entry, const fusion::TilingOptions& tiling,
                  const std::map<std::vector<int64_t>, fusion::TileChoice>& tiles, fusion::FusionPlan& plan) {
  size_t applied = 0;
  for (fusion::Kernel& kernel : plan.kernels) {
    auto it = tiles.find(kernel.instructions);
    if (it == tiles.end()) continue;
    fusion::TilingProblem problem = fusion::MakeTilingProblem(entry, kernel);
    if (problem.space == fusion::TilingProblem::Space::kUntiled || !it->second.tiled) {
      return InvalidArgumentError("tile for kernel " + std::to_string(kernel.id) + " (root %" +
                                  std::string(entry.instructions()[kernel.roots.front()]->name()) +
                                  "): only a tiled kernel takes a tile, and only a tiled one");
    }
    Status valid = fusion::ValidateTile(problem, it->second, tiling);
    if (!valid) {
      return valid.error().WithContext("tile for kernel " + std::to_string(kernel.id) + " (root %" +
                                       std::string(entry.instructions()[kernel.roots.front()]->name()) + ")");
    }
    kernel.tile = it->second;
    ++applied;
  }
  if (applied != tiles.size()) {
    for (const auto& [instructions, tile] : tiles) {
      bool found = false;
      for (const fusion::Kernel& kernel : plan.kernels) found |= kernel.instructions == instructions;
      if (!found) {
        return InvalidArgumentError("tile for instructions " + Indices(instructions) +
                                    ": the edited plan has no such kernel");
      }
    }
  }
  return Ok();
}

}  // namespace

Result<CompiledPlan> PlanTuned(const PreparedModule& prepared, const CompileOptions& options,
                               const fusion::FusionPlan& base, const PlanEdits& edits) {
  if (options.plan != fusion::PlanKind::kHeuristic || base.kind != fusion::PlanKind::kHeuristic) {
    return InvalidArgumentError("a tuned plan edits the heuristic plan under the heuristic compile's options");
  }
  KILN_RETURN_IF_ERROR(CheckPlanFits(prepared, options));
  if (edits.body_flips != prepared.body_flips) {
    return FailedPreconditionError("the tuned plan's body flips are not those the module's bodies were fused with");
  }
  Stopwatch watch;
  const hlo::Computation& entry = *prepared.module->entry();
  const fusion::TilingOptions tiling = TilingOptionsFor(options, *runtime::FindChip(options.chip));
  fusion::FusionPlan plan;
  plan.kind = fusion::PlanKind::kTuned;
  KILN_ASSIGN_OR_RETURN(plan.edges, fusion::FlipEdges(base, edits.flipped_edges));
  Status formed = fusion::FormKernels(entry, tiling, plan);
  if (!formed) return formed.error().WithContext("tuned plan");
  KILN_RETURN_IF_ERROR(ApplyTiles(entry, tiling, edits.tiles, plan));
  if (!edits.kernel_order.empty()) {
    Status ordered = fusion::ReorderKernels(entry, edits.kernel_order, plan);
    if (!ordered) return ordered.error().WithContext("tuned plan's kernel order");
  }
  double planning_ms = watch.LapMs();
  KILN_ASSIGN_OR_RETURN(CompiledPlan out, CompletePlan(prepared, options, std::move(plan)));
  out.times.planning_ms = planning_ms;
  return out;
}

Result<CompileOutput> LowerTuned(const PreparedModule& prepared, const CompileOptions& options,
                                 const fusion::FusionPlan& base, const PlanEdits& edits) {
  if (edits.body_flips != prepared.body_flips) {
    KILN_ASSIGN_OR_RETURN(PreparedModule variant, WithBodyFlips(prepared, options, edits.body_flips));
    KILN_ASSIGN_OR_RETURN(CompiledPlan compiled, PlanTuned(variant, options, base, edits));
    return LowerPlanned(variant, options, std::move(compiled));
  }
  KILN_ASSIGN_OR_RETURN(CompiledPlan compiled, PlanTuned(prepared, options, base, edits));
  return LowerPlanned(prepared, options, std::move(compiled));
}

}  // namespace kiln::driver
