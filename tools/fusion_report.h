// How `kiln compile` shows fusion decisions (fusion_decisions.h): as JSON
// for --json and as an aligned table for --explain-fusion. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/fusion/body_fusion.h"
#include "compiler/fusion/fusion_decisions.h"

namespace kiln::tools {

// [{"producer", "consumer", "fused", "kind", "reason", "rule"}, ...] plus
// "sibling" on multi-output (sibling) decisions.
nlohmann::json FusionDecisionsJson(const std::vector<fusion::FusionDecision>& decisions);

// [{"computation", "decisions": FusionDecisionsJson}, ...]: the decisions
// in each loop body and branch (body_fusion.h), in planning order.
nlohmann::json BodyFusionDecisionsJson(const std::vector<fusion::BodyDecisions>& bodies);

// One header line, then one line per decision: producer, consumer (for
// siblings "a + b"), fused yes/no, legality/profitability, reason; columns
// padded to their widest cell.
std::string FusionDecisionTable(const std::vector<fusion::FusionDecision>& decisions);

}  // namespace kiln::tools
