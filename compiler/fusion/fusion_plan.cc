#include "compiler/fusion/fusion_plan.h"

#include <algorithm>

namespace kiln::fusion {

std::string_view KernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kSingle:
      return "single";
    case KernelKind::kLoop:
      return "loop";
    case KernelKind::kInput:
      return "input";
    case KernelKind::kOutput:
      return "output";
    case KernelKind::kMultiOutput:
      return "multi-output";
    case KernelKind::kGiven:
      return "given";
    case KernelKind::kHorizontal:
      return "horizontal";
  }
  return "?";
}

std::string_view FusionRuleName(FusionRule rule) {
  switch (rule) {
    case FusionRule::kLoop:
      return "loop";
    case FusionRule::kInput:
      return "input";
    case FusionRule::kOutput:
      return "output";
    case FusionRule::kMultiOutput:
      return "multi-output";
    case FusionRule::kNone:
      return "none";
    case FusionRule::kPrologue:
      return "prologue";
    case FusionRule::kHorizontal:
      return "horizontal";
  }
  return "?";
}

std::string_view DecisionKindName(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::kProfitability:
      return "profitability";
    case DecisionKind::kLegality:
      return "legality";
  }
  return "?";
}

int64_t TileChoice::grid_steps() const {
  int64_t steps = 1;
  for (int64_t g : grid) steps *= std::max<int64_t>(g, 1);
  return steps;
}

int64_t FusionPlan::fused_edge_count() const {
  return std::count_if(edges.begin(), edges.end(), [](const FusionEdge& e) { return e.fused; });
}

}  // namespace kiln::fusion
