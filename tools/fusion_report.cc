#include "tools/fusion_report.h"

#include <algorithm>
#include <array>

namespace kiln::tools {

nlohmann::json FusionDecisionsJson(const std::vector<fusion::FusionDecision>& decisions) {
  nlohmann::json list = nlohmann::json::array();
  for (const fusion::FusionDecision& d : decisions) {
    nlohmann::json j = {
        {"producer", d.producer},
        {"consumer", d.consumer},
        {"fused", d.fused},
        {"kind", fusion::DecisionKindName(d.kind)},
        {"rule", fusion::FusionRuleName(d.rule)},
        {"reason", d.reason},
    };
    if (!d.sibling.empty()) j["sibling"] = d.sibling;
    list.push_back(std::move(j));
  }
  return list;
}

nlohmann::json BodyFusionDecisionsJson(const std::vector<fusion::BodyDecisions>& bodies) {
  nlohmann::json list = nlohmann::json::array();
  for (const fusion::BodyDecisions& body : bodies) {
    list.push_back({{"computation", body.computation}, {"decisions", FusionDecisionsJson(body.decisions)}});
  }
  return list;
}

std::string FusionDecisionTable(const std::vector<fusion::FusionDecision>& decisions) {
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows;
  rows.reserve(decisions.size() + 1);
  rows.push_back({"PRODUCER", "CONSUMER", "FUSED", "KIND", "REASON"});
  for (const fusion::FusionDecision& d : decisions) {
    rows.push_back({d.producer, d.sibling.empty() ? d.consumer : d.consumer + " + " + d.sibling,
                    d.fused ? "yes" : "no", std::string(fusion::DecisionKindName(d.kind)),
                    d.reason});
  }
  std::array<size_t, 4> width{};  // the last column is not padded
  for (const Row& row : rows) {
    for (size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const Row& row : rows) {
    for (size_t c = 0; c < width.size(); ++c) {
      out += row[c];
      out.append(width[c] - row[c].size() + 2, ' ');
    }
    out += row[4];
    out += '\n';
  }
  return out;
}

}  // namespace kiln::tools
