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

namespace {

// The sibling search prunes by program order and is bounded, so a
// multi-output merge it accepted may still close a cycle through kernels
// it did not visit. Rather than fail the compile or drop every merge, this
// finds the first merge whose prefix of merges no longer forms (a binary
// search over the fused sibling edges, in the order they were decided),
// undoes it alone and tries again; after kMaxUndos it undoes them all.
Status UndoCyclicMerges(const hlo::Computation& computation, const PlannerOptions& options, Status formed,
                        FusionPlan& plan) {
  constexpr int kMaxUndos = 8;
  auto undo = [&](FusionEdge& edge, const Status& why) {
    edge.fused = false;
    edge.kind = DecisionKind::kLegality;
    edge.reason = "multi-output fusion undone: " + why.error().ToString();
  };
  for (int round = 0; round < kMaxUndos && !formed; ++round) {
    std::vector<size_t> merges;
    for (size_t i = 0; i < plan.edges.size(); ++i) {
      if (plan.edges[i].is_sibling() && plan.edges[i].fused) merges.push_back(i);
    }
    if (merges.empty()) return formed;
    // Smallest k such that the first k merges do not form: merge k-1 closes a cycle.
    size_t lo = 0, hi = merges.size();  // prefix lo forms (0 merges: the plan without any)
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      FusionPlan trial;
      trial.edges = plan.edges;
      for (size_t j = mid; j < merges.size(); ++j) trial.edges[merges[j]].fused = false;
      if (FormKernels(computation, options.tiling, trial)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    undo(plan.edges[merges[hi - 1]], formed);
    formed = FormKernels(computation, options.tiling, plan);
  }
  if (!formed) {
    const Status why = formed;
    for (FusionEdge& edge : plan.edges) {
      if (edge.is_sibling() && edge.fused) undo(edge, why);
    }
    formed = FormKernels(computation, options.tiling, plan);
  }
  return formed;
}

}  // namespace

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
  if (!formed && kind == PlanKind::kHeuristic) formed = UndoCyclicMerges(computation, options, std::move(formed), plan);
  KILN_RETURN_IF_ERROR(formed);
  return plan;
}

}  // namespace kiln::fusion
