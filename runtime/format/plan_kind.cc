#include "runtime/format/plan_kind.h"

#include <string>

namespace kiln::runtime {

std::string_view PlanKindName(PlanKind kind) {
  switch (kind) {
    case PlanKind::kNone: return "none";
    case PlanKind::kHeuristic: return "heuristic";
    case PlanKind::kGiven: return "given";
    case PlanKind::kTuned: return "tuned";
  }
  return "heuristic";
}

Result<PlanKind> ParsePlanKind(std::string_view name) {
  for (PlanKind kind : {PlanKind::kNone, PlanKind::kHeuristic, PlanKind::kGiven, PlanKind::kTuned}) {
    if (PlanKindName(kind) == name) return kind;
  }
  return InvalidArgumentError("unknown plan kind \"" + std::string(name) +
                              "\" (expected none, heuristic, given or tuned)");
}

}  // namespace kiln::runtime
