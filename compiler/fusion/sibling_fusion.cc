// Multi-output (sibling) fusion of the heuristic planner: kernels of the
// same iteration shape that read the same value merge when they do not
// depend on each other and still fit.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/fusion/heuristic_planner.h"
#include "compiler/fusion/op_class.h"

namespace kiln::fusion::internal {

int32_t HeuristicPlanner::Rep(int32_t g) {
  while (rep_[g] != g) g = rep_[g] = rep_[rep_[g]];
  return g;
}

// The shape a group iterates over; empty when it cannot be a sibling.
const hlo::Shape* HeuristicPlanner::SiblingKey(const Group& group) const {
  if (group.opaque || group.contraction != nullptr || group.window != nullptr ||
      !group.root->shape().IsArray()) {
    return nullptr;
  }
  if (group.reduce != nullptr) return &group.reduce->operand(0)->shape();
  return &group.root->shape();
}

// True when group `from` (a representative) reads, through any chain of
// kernels, a value of group `target`. Groups whose roots all come before
// the target's first root cannot reach it (operands precede users) and
// are pruned. With `direct_reads_ok`, `from`'s own reads of the target's
// values (which it will compute once merged) do not count. Gives up (true)
// after a bounded search.
bool HeuristicPlanner::DependsOn(int32_t from, int32_t target, bool& gave_up, bool direct_reads_ok) {
  constexpr int kMaxVisits = 256;
  const int64_t target_first = groups_[target].first_root;
  if (groups_[from].last_root < target_first) return false;
  ++epoch_;
  int visits = 0;
  stack_.assign(1, from);
  while (!stack_.empty()) {
    int32_t g = stack_.back();
    stack_.pop_back();
    if (visited_[g] == epoch_) continue;
    visited_[g] = epoch_;
    if (++visits > kMaxVisits) {
      gave_up = true;
      return true;
    }
    for (const Instruction* in : groups_[g].inputs) {
      values_.assign(1, in);
      while (!values_.empty()) {
        const Instruction* v = values_.back();
        values_.pop_back();
        int32_t owner = own_group_[v->index_in_parent()];
        if (owner >= 0) {
          int32_t r = Rep(owner);
          if (r == target) {
            if (direct_reads_ok && g == from && v == in) continue;
            return true;
          }
          if (r != g && groups_[r].last_root >= target_first) stack_.push_back(r);
        } else if (IsFreeInstruction(*v) && v->index_in_parent() > target_first) {
          for (const Instruction* operand : v->operands()) values_.push_back(operand);
        }
      }
    }
  }
  return false;
}

void HeuristicPlanner::MergeSiblings() {
  const auto& instrs = computation_.instructions();
  visited_.assign(groups_.size(), 0);
  std::vector<std::vector<int32_t>> readers(instrs.size());
  for (int32_t g = 0; g < static_cast<int32_t>(groups_.size()); ++g) {
    if (SiblingKey(groups_[g]) == nullptr) continue;
    for (const Instruction* in : groups_[g].inputs) {
      // Sharing a constant or a small value is no reason to merge.
      if (in->opcode() == hlo::Opcode::kConstant ||
          ShapeBytes(in->shape()) < options_.sibling_min_shared_bytes) {
        continue;
      }
      std::vector<int32_t>& list = readers[in->index_in_parent()];
      if (static_cast<int64_t>(list.size()) < options_.max_sibling_candidates) {
        list.push_back(g);
      }
    }
  }
  for (size_t x = 0; x < instrs.size(); ++x) {
    if (readers[x].size() < 2) continue;
    // Each reader joins the first earlier reader's kernel it can; the edge
    // to the first one says why when none takes it.
    for (size_t j = 1; j < readers[x].size(); ++j) {
      const int32_t g = readers[x][j];
      std::optional<FusionEdge> refused;
      for (size_t i = 0; i < j; ++i) {
        const int32_t a = Rep(readers[x][i]);
        const int32_t b = Rep(g);
        if (a == b) {  // already merged through another value
          refused.reset();
          break;
        }
        FusionEdge edge{static_cast<int64_t>(x), groups_[a].root->index_in_parent(),
                        groups_[g].root->index_in_parent(), FusionRule::kMultiOutput, false, ""};
        std::optional<Refusal> why = CheckSiblings(a, b);
        if (!why) {
          edge.fused = true;
          edge.reason = "multi-output fusion: %" + std::string(groups_[a].root->name()) + " and %" +
                        std::string(groups_[b].root->name()) + " both read %" +
                        std::string(instrs[x]->name());
          Merge(a, b);
          edges_.push_back(std::move(edge));
          refused.reset();
          break;
        }
        if (!refused) {
          edge.kind = why->kind;
          edge.reason = std::move(why->reason);
          refused = std::move(edge);
        }
      }
      if (refused) edges_.push_back(std::move(*refused));
    }
  }
}

std::optional<Refusal> HeuristicPlanner::CheckSiblings(int32_t a, int32_t b, bool a_reads_b,
                                                       bool horizontal) {
  const Group& ga = groups_[a];
  const Group& gb = groups_[b];
  const hlo::Shape* ka = SiblingKey(ga);
  const hlo::Shape* kb = SiblingKey(gb);
  std::string pair = (horizontal ? "kernels %" : "siblings %") + std::string(ga.root->name()) + " and %" +
                     std::string(gb.root->name());
  auto illegal = [](std::string why) { return Refusal{DecisionKind::kLegality, std::move(why)}; };
  auto unprofitable = [](std::string why) {
    return Refusal{DecisionKind::kProfitability, std::move(why)};
  };
  if (ka == nullptr || kb == nullptr) return illegal(pair + " cannot share a kernel");
  if (!horizontal && !ka->SameDimensions(*kb)) {
    return illegal(pair + " iterate over different shapes (" + ka->ToString() + " vs " +
                   kb->ToString() + ")");
  }
  if (!horizontal && ga.reduce != nullptr && gb.reduce != nullptr &&
      !SameReductionSpace(*ga.reduce, *gb.reduce)) {
    return illegal(pair + " reduce along different dimensions");
  }
  if (ga.member_count + gb.member_count > options_.max_kernel_instructions) {
    return unprofitable(pair + " together have more than " +
                        std::to_string(options_.max_kernel_instructions) + " instructions");
  }
  bool gave_up = false;
  if (DependsOn(a, b, gave_up, a_reads_b) || DependsOn(b, a, gave_up)) {
    // Not proven independent counts as a cycle: merging might close one.
    return illegal(gave_up ? pair + ": could not prove them independent within 256 kernels"
                           : pair + " depend on each other: merging them would create a cycle");
  }
  Group merged = Merged(ga, gb, a_reads_b);
  if (static_cast<int64_t>(merged.inputs.size()) > options_.max_kernel_inputs) {
    return unprofitable(pair + " together read " + std::to_string(merged.inputs.size()) +
                        " arrays (limit " + std::to_string(options_.max_kernel_inputs) + ")");
  }
  // A horizontal kernel has no common grid: it holds its arrays whole.
  TilingProblem problem;
  if (horizontal) {
    problem.whole = true;
    problem.outputs = merged.outputs;
  } else {
    problem = ProblemOf(merged, nullptr);
  }
  problem.inputs = merged.inputs;
  int64_t vmem = 0;
  if (!FitsScopedVmem(problem, options_.tiling, &vmem)) {
    if (horizontal) {
      return illegal(pair + " would need " + FormatBytes(vmem) +
                     " of VMEM for their whole arrays, scoped VMEM is " +
                     FormatBytes(options_.tiling.scoped_vmem_bytes));
    }
    return illegal("fusing " + pair + " would need " + FormatBytes(vmem) +
                   " of VMEM, scoped VMEM is " + FormatBytes(options_.tiling.scoped_vmem_bytes));
  }
  return std::nullopt;
}

// Merging the readers of a small value saves little traffic, so the
// heuristic leaves them apart; merged, two small kernels launch once, which
// only measurement weighs against the larger kernel. Each reader of such a
// value is paired with the first of the earlier readers (trying a few)
// that it may legally merge with, one of its own iteration shape first
// (multi-output), else one of another shape (horizontal, whole arrays),
// and the pair is offered to the autotuner as an unfused profitability
// choice.
void HeuristicPlanner::OfferSmallValueSiblings() {
  constexpr int kTriesPerReader = 4;
  const auto& instrs = computation_.instructions();
  // Shared value -> representatives reading it, in order.
  std::map<int64_t, std::vector<int32_t>> readers;
  for (int32_t g = 0; g < static_cast<int32_t>(groups_.size()); ++g) {
    if (Rep(g) != g || SiblingKey(groups_[g]) == nullptr) continue;  // merged groups read through their rep
    for (const Instruction* in : groups_[g].inputs) {
      if (in->opcode() == hlo::Opcode::kConstant ||
          ShapeBytes(in->shape()) >= options_.sibling_min_shared_bytes) {
        continue;
      }
      std::vector<int32_t>& list = readers[in->index_in_parent()];
      if (static_cast<int64_t>(list.size()) < 2 * options_.max_sibling_candidates) list.push_back(g);
    }
  }
  std::set<std::pair<int32_t, int32_t>> offered;
  for (const auto& [value, list] : readers) {
    const Instruction& shared = *instrs[value];
    for (size_t j = 1; j < list.size(); ++j) {
      const int32_t b = list[j];
      const hlo::Shape& b_shape = *SiblingKey(groups_[b]);
      bool done = false;
      for (bool horizontal : {false, true}) {
        int tries = 0;
        for (size_t i = 0; i < j && tries < kTriesPerReader && !done; ++i) {
          const int32_t a = list[i];
          if (SiblingKey(groups_[a])->SameDimensions(b_shape) == horizontal) continue;
          ++tries;
          if (offered.contains({a, b})) {
            done = true;
            break;
          }
          std::optional<Refusal> why = CheckSiblings(a, b, /*a_reads_b=*/false, horizontal);
          if (why && why->kind == DecisionKind::kLegality) continue;
          offered.insert({a, b});
          std::string reason =
              std::string(horizontal ? "kernels %" : "siblings %") + std::string(groups_[a].root->name()) +
              " and %" + std::string(groups_[b].root->name()) + " share only %" + std::string(shared.name()) +
              " (" + FormatBytes(ShapeBytes(shared.shape())) + "): a value under " +
              FormatBytes(options_.sibling_min_shared_bytes) + " is no reason to merge; merged" +
              (horizontal ? " on whole arrays (their shapes differ)" : "") + ", they would launch once";
          if (why) reason = std::move(why->reason);
          edges_.push_back({value, groups_[a].root->index_in_parent(), groups_[b].root->index_in_parent(),
                            horizontal ? FusionRule::kHorizontal : FusionRule::kMultiOutput, false,
                            std::move(reason), DecisionKind::kProfitability});
          done = true;
        }
        if (done) break;
      }
    }
  }
}

Group HeuristicPlanner::Merged(const Group& a, const Group& b, bool a_reads_b) {
  Group m = a;
  m.member_count = a.member_count + b.member_count;
  for (const Instruction* in : b.inputs) {
    if (std::find(m.inputs.begin(), m.inputs.end(), in) == m.inputs.end()) {
      m.inputs.push_back(in);
    }
  }
  if (a_reads_b) {
    std::erase_if(m.inputs, [&](const Instruction* in) {
      return std::find(b.outputs.begin(), b.outputs.end(), in) != b.outputs.end();
    });
  }
  m.outputs.insert(m.outputs.end(), b.outputs.begin(), b.outputs.end());
  if (m.reduce == nullptr) m.reduce = b.reduce;
  m.first_root = std::min(a.first_root, b.first_root);
  m.last_root = std::max(a.last_root, b.last_root);
  return m;
}

void HeuristicPlanner::Merge(int32_t a, int32_t b, bool a_reads_b) {
  groups_[a] = Merged(groups_[a], groups_[b], a_reads_b);
  rep_[b] = a;
}

}  // namespace kiln::fusion::internal
