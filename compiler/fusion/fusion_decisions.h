// FusionDecision: one edge of a FusionPlan with instruction names instead of
// entry indices, for users (`kiln compile --json`, `--explain-fusion`).
//
// Names are the instructions' names (without `%`) in the computation the
// plan was made for (the entry, or a loop body: body_fusion.h), i.e. after
// the pass pipeline; names the passes made
// up (e.g. inlined fusions) appear as the passes named them. Plain values;
// NameDecisions copies what it needs and keeps no reference.
#pragma once

#include <string>
#include <vector>

#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"

namespace kiln::fusion {

struct FusionDecision {
  std::string producer;  // producer->consumer edge: the operand; sibling edge: the shared value
  std::string consumer;  // the user; sibling edge: the root of the first kernel
  std::string sibling;   // sibling edge: the root of the second kernel; else empty
  FusionRule rule = FusionRule::kNone;
  bool fused = false;
  DecisionKind kind = DecisionKind::kProfitability;
  std::string reason;
};

// One decision per edge of `edges`, in the same order. Edges whose indices
// fall outside `entry` are named "#<index>" rather than failing.
std::vector<FusionDecision> NameDecisions(const hlo::Computation& entry,
                                          const std::vector<FusionEdge>& edges);

}  // namespace kiln::fusion
