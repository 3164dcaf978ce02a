#include "compiler/fusion/planner.h"

#include <optional>
#include <string>
#include <vector>

#include "compiler/fusion/heuristic_planner.h"
#include "compiler/fusion/kernel_formation.h"
#include "compiler/fusion/op_class.h"

namespace kiln::fusion {

// Every producer->consumer edge between kernel-forming instructions,
// refused with `reason`: a choice of the plan (kProfitability) unless the
// op classes forbid the fusion anyway (kLegality, with their reason added).
std::vector<FusionEdge> RefusedEdges(const hlo::Computation& computation,
                                     const std::string& reason) {
  std::vector<FusionEdge> edges;
  for (const auto& instr : computation.instructions()) {
    if (IsFreeInstruction(*instr)) continue;
    for (const hlo::Instruction* user : instr->users()) {
      if (IsFreeInstruction(*user)) continue;
      FusionEdge edge{instr->index_in_parent(), user->index_in_parent(), -1, FusionRule::kNone,
                      false, reason};
      if (std::optional<std::string> why = internal::OpClassRefusal(*instr, *user)) {
        edge.kind = DecisionKind::kLegality;
        edge.reason += "; " + *why;
      }
      edges.push_back(std::move(edge));
    }
  }
  return edges;
}

Result<FusionPlan> PlanComputation(const hlo::Computation& computation, PlanKind kind,
                                   const PlannerOptions& options) {
  FusionPlan plan;
  plan.kind = kind;
  switch (kind) {
    case PlanKind::kNone:
      plan.edges = RefusedEdges(computation, "plan none: every instruction is its own kernel");
      break;
    case PlanKind::kGiven:
      plan.edges = RefusedEdges(computation, "plan given: XLA's fusion decisions are kept as-is");
      break;
    case PlanKind::kHeuristic:
      plan.edges = HeuristicEdges(computation, options);
      break;
    case PlanKind::kTuned:
      return InvalidArgumentError("plan tuned: a tuned plan comes from the autotuner, the planner cannot make one");
  }
  Status formed = FormKernels(computation, options.tiling, plan);
  if (!formed && kind == PlanKind::kHeuristic) {
    // The sibling search is bounded; should a merge it accepted still close
    // a cycle, undo the multi-output merges rather than fail the compile.
    for (FusionEdge& edge : plan.edges) {
      if (edge.is_sibling() && edge.fused) {
        edge.fused = false;
        edge.kind = DecisionKind::kLegality;
        edge.reason = "multi-output fusion undone: " + formed.error().ToString();
      }
    }
    formed = FormKernels(computation, options.tiling, plan);
  }
  KILN_RETURN_IF_ERROR(formed);
  return plan;
}

}  // namespace kiln::fusion
