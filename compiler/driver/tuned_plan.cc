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

Result<std::vector<fusion::FusionEdge>> FlippedEdges(const fusion::FusionPlan& base,
                                                     const std::vector<int64_t>& flipped_edges) {
  std::vector<fusion::FusionEdge> edges = base.edges;
  std::vector<char> seen(edges.size(), 0);
  for (int64_t e : flipped_edges) {
    if (e < 0 || e >= static_cast<int64_t>(edges.size())) {
      return InvalidArgumentError("flip of edge " + std::to_string(e) + ": the plan has " +
                                  std::to_string(edges.size()) + " edges");
    }
    if (seen[e]++) return InvalidArgumentError("edge " + std::to_string(e) + " is flipped twice");
    fusion::FusionEdge& edge = edges[e];
    if (edge.kind == fusion::DecisionKind::kLegality) {
      return InvalidArgumentError("edge " + std::to_string(e) + " is a legality decision and may not be flipped (" +
                                  edge.reason + ")");
    }
    edge.fused = !edge.fused;
    edge.reason = std::string("autotuner: ") + (edge.fused ? "fused" : "not fused") +
                  " (the heuristic said: " + edge.reason + ")";
  }
  return edges;
}

Result<CompiledPlan> PlanTuned(const PreparedModule& prepared, const CompileOptions& options,
                               const fusion::FusionPlan& base, const PlanEdits& edits) {
  if (options.plan != fusion::PlanKind::kHeuristic || base.kind != fusion::PlanKind::kHeuristic) {
    return InvalidArgumentError("a tuned plan edits the heuristic plan under the heuristic compile's options");
  }
  KILN_RETURN_IF_ERROR(CheckPlanFits(prepared, options));
  Stopwatch watch;
  const hlo::Computation& entry = *prepared.module->entry();
  const fusion::TilingOptions tiling = TilingOptionsFor(options, *runtime::FindChip(options.chip));
  fusion::FusionPlan plan;
  plan.kind = fusion::PlanKind::kTuned;
  KILN_ASSIGN_OR_RETURN(plan.edges, FlippedEdges(base, edits.flipped_edges));
  Status formed = fusion::FormKernels(entry, tiling, plan);
  if (!formed) return formed.error().WithContext("tuned plan");
  KILN_RETURN_IF_ERROR(ApplyTiles(entry, tiling, edits.tiles, plan));
  double planning_ms = watch.LapMs();
  KILN_ASSIGN_OR_RETURN(CompiledPlan out, CompletePlan(prepared, options, std::move(plan)));
  out.times.planning_ms = planning_ms;
  return out;
}

Result<CompileOutput> LowerTuned(const PreparedModule& prepared, const CompileOptions& options,
                                 const fusion::FusionPlan& base, const PlanEdits& edits) {
  KILN_ASSIGN_OR_RETURN(CompiledPlan compiled, PlanTuned(prepared, options, base, edits));
  return LowerPlanned(prepared, options, std::move(compiled));
}

}  // namespace kiln::driver
