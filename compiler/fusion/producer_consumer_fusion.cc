// Producer-consumer multi-output fusion of the heuristic planner: a value
// that stays materialized because several kernels read it (an expensive
// `exponential` read by a softmax's sum and its division) is computed in
// the kernel of one consumer, which also writes it for the others. The
// consumer then reads it from VMEM instead of HBM, and one kernel fewer
// runs. XLA's multi-output fusion does the same, preferring reductions.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compiler/fusion/heuristic_planner.h"
#include "compiler/fusion/op_class.h"

namespace kiln::fusion::internal {
namespace {

// Whether `user` reads `p` at the element it computes, so that a kernel
// iterating over p's shape has p's block at hand: an elementwise op of p's
// dimensions, or a reduction of p.
bool ReadsAligned(const Instruction& user, const Instruction& p) {
  if (ClassOf(user) == OpClass::kReduce) return user.operand(0) == &p;
  return ClassOf(user) == OpClass::kElementwise && user.shape().IsArray() &&
         user.shape().SameDimensions(p.shape());
}

bool IsReduce(const Instruction& instr) { return ClassOf(instr) == OpClass::kReduce; }

}  // namespace

// Runs after MergeSiblings, which sized DependsOn's scratch for every group.
void HeuristicPlanner::MergeProducersIntoConsumers() {
  std::vector<const Instruction*> users;
  for (int32_t own = 0; own < static_cast<int32_t>(groups_.size()); ++own) {
    const Instruction& p = *groups_[own].root;
    if (groups_[own].reduce != nullptr || SiblingKey(groups_[own]) == nullptr) continue;
    // Cheap values are recomputed in each consumer instead (Decide).
    if (!IsExpensive(p) || !p.shape().IsArray() || p.users().size() < 2) continue;
    // Reductions first, as XLA prefers: their kernel iterates over p.
    users.assign(p.users().begin(), p.users().end());
    std::stable_partition(users.begin(), users.end(),
                          [](const Instruction* u) { return IsReduce(*u); });
    for (const Instruction* user : users) {
      const std::vector<int32_t>& in = groups_of_[user->index_in_parent()];
      if (in.size() != 1) continue;  // duplicated into several kernels
      int32_t a = Rep(in.front());
      int32_t b = Rep(own);
      if (a == b || groups_[b].reduce != nullptr || SiblingKey(groups_[a]) == nullptr) continue;
      const auto& reads = groups_[a].inputs;
      if (std::find(reads.begin(), reads.end(), &p) == reads.end()) continue;
      FusionEdge edge{p.index_in_parent(), groups_[a].root->index_in_parent(),
                      p.index_in_parent(), FusionRule::kMultiOutput, false, ""};
      std::optional<Refusal> why;
      for (const Instruction* other : p.users()) {
        const std::vector<int32_t>& its = groups_of_[other->index_in_parent()];
        bool in_a = std::any_of(its.begin(), its.end(), [&](int32_t g) { return Rep(g) == a; });
        if (in_a && !ReadsAligned(*other, p)) {
          why = Refusal{DecisionKind::kLegality, Describe(*other) + " reads %" + std::string(p.name()) +
                                                     " at other elements than the kernel of %" +
                                                     std::string(groups_[a].root->name()) + " iterates over"};
          break;
        }
      }
      if (!why) why = CheckSiblings(a, b, /*a_reads_b=*/true);
      if (why) {
        edge.kind = why->kind;
        edge.reason = std::move(why->reason);
        edges_.push_back(std::move(edge));
        continue;
      }
      Merge(a, b, /*a_reads_b=*/true);
      if (AbsorbIfAllReadersInside(p, a)) break;
      int64_t outside = 0;
      for (const Instruction* other : p.users()) {
        const std::vector<int32_t>& its = groups_of_[other->index_in_parent()];
        outside += std::any_of(its.begin(), its.end(), [&](int32_t g) { return Rep(g) != a; });
      }
      edge.fused = true;
      edge.reason = "multi-output fusion: the kernel of %" + std::string(groups_[a].root->name()) +
                    " computes %" + std::string(p.name()) + " and writes it for " + std::to_string(outside) +
                    " other consumer" + (outside == 1 ? "" : "s");
      edges_.push_back(std::move(edge));
    }
  }
}

bool HeuristicPlanner::AbsorbIfAllReadersInside(const Instruction& p, int32_t kernel) {
  if (&p == computation_.root()) return false;
  std::vector<FusionEdge*> reads;
  for (const Instruction* user : p.users()) {
    if (IsFreeInstruction(*user)) return false;
  }
  for (FusionEdge& edge : edges_) {
    if (edge.is_sibling() || edge.fused || edge.producer != p.index_in_parent()) continue;
    for (int32_t g : groups_of_[edge.consumer]) {
      if (Rep(g) != kernel) return false;
    }
    reads.push_back(&edge);
  }
  for (FusionEdge* edge : reads) {
    edge->fused = true;
    edge->kind = DecisionKind::kProfitability;
    edge->reason = "every consumer that reads %" + std::string(p.name()) + " is in the kernel of %" +
                   std::string(groups_[kernel].root->name()) + ": it is computed there once and not written";
  }
  std::erase(groups_[kernel].outputs, &p);
  return true;
}

}  // namespace kiln::fusion::internal
