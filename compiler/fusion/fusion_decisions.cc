#include "compiler/fusion/fusion_decisions.h"

#include <cstdint>

namespace kiln::fusion {

std::vector<FusionDecision> NameDecisions(const hlo::Computation& entry,
                                          const std::vector<FusionEdge>& edges) {
  const auto& instrs = entry.instructions();
  auto name = [&](int64_t i) -> std::string {
    if (i >= 0 && i < static_cast<int64_t>(instrs.size())) return std::string(instrs[i]->name());
    return "#" + std::to_string(i);
  };
  std::vector<FusionDecision> decisions;
  decisions.reserve(edges.size());
  for (const FusionEdge& edge : edges) {
    decisions.push_back({name(edge.producer), name(edge.consumer),
                         edge.is_sibling() ? name(edge.sibling) : std::string(), edge.rule,
                         edge.fused, edge.kind, edge.reason});
  }
  return decisions;
}

}  // namespace kiln::fusion
