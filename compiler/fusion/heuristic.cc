// Producer->consumer decisions of the heuristic planner (planner.h).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compiler/fusion/heuristic_planner.h"
#include "compiler/fusion/op_class.h"

namespace kiln::fusion {
namespace internal {

std::vector<FusionEdge> HeuristicPlanner::Run() {
  const auto& instrs = computation_.instructions();
  for (auto it = instrs.rbegin(); it != instrs.rend(); ++it) VisitProducer(it->get());
  MergeSiblings();
  return std::move(edges_);
}

void HeuristicPlanner::VisitProducer(const Instruction* producer) {
  if (IsFreeInstruction(*producer)) return;
  bool materialized = producer == computation_.root() || producer->users().empty();
  for (const Instruction* consumer : producer->users()) {
    if (IsFreeInstruction(*consumer)) {
      materialized = true;
      continue;
    }
    FusionEdge edge = Decide(*producer, *consumer);
    if (edge.fused) {
      Commit(*producer, *consumer);
    } else {
      materialized = true;
    }
    edges_.push_back(std::move(edge));
  }
  if (materialized) StartGroup(*producer);
}

FusionEdge HeuristicPlanner::Refuse(const Instruction& p, const Instruction& c, FusionRule rule,
                                    DecisionKind kind, std::string reason) {
  return {p.index_in_parent(), c.index_in_parent(), -1, rule, false, std::move(reason), kind};
}

std::optional<std::string> OpClassRefusal(const Instruction& p, const Instruction& c) {
  OpClass pc = ClassOf(p);
  OpClass cc = ClassOf(c);
  if (pc == OpClass::kOpaque) {
    return "producer " + Describe(p) + " is not fusible: it runs as its own kernel";
  }
  if (cc == OpClass::kOpaque) {
    return "consumer " + Describe(c) + " is not fusible: it runs as its own kernel";
  }
  if (pc == OpClass::kReduce) {
    return "producer " + Describe(p) +
           " is a reduction: it is only fused as the root of an input fusion";
  }
  if (cc == OpClass::kContraction) {
    return "consumer " + Describe(c) +
           " streams its operands from HBM into the MXU: producers are not fused "
           "into a dot or convolution";
  }
  return std::nullopt;
}

FusionEdge HeuristicPlanner::Decide(const Instruction& p, const Instruction& c) {
  if (std::optional<std::string> why = OpClassRefusal(p, c)) {
    return Refuse(p, c, FusionRule::kNone, DecisionKind::kLegality, std::move(*why));
  }
  OpClass pc = ClassOf(p);
  OpClass cc = ClassOf(c);
  const std::vector<int32_t>& consumer_groups = groups_of_[c.index_in_parent()];
  FusionRule rule = FusionRule::kLoop;
  const Instruction* reduce = nullptr;
  for (int32_t g : consumer_groups) {
    if (groups_[g].reduce != nullptr) reduce = groups_[g].reduce;
  }
  if (pc == OpClass::kContraction) {
    rule = FusionRule::kOutput;
  } else if (reduce != nullptr) {
    rule = FusionRule::kInput;
  }
  int64_t users = static_cast<int64_t>(p.users().size());
  if (pc == OpClass::kContraction) {
    if (cc != OpClass::kElementwise) {
      return Refuse(p, c, rule, DecisionKind::kLegality,
                    "only elementwise epilogues (bias, activation, scaling) are fused into " +
                        Describe(p) + "; " + Describe(c) + " is not elementwise");
    }
    for (int32_t g : consumer_groups) {
      if (groups_[g].reduce != nullptr) {
        return Refuse(p, c, rule, DecisionKind::kLegality,
                      "the kernel of " + Describe(c) + " already has reduction " +
                          Describe(*groups_[g].reduce) +
                          ": a dot or convolution only takes elementwise epilogues");
      }
      if (groups_[g].contraction != nullptr) {
        return Refuse(p, c, rule, DecisionKind::kLegality,
                      "the kernel of " + Describe(c) + " already contains " +
                          Describe(*groups_[g].contraction) + ": one MXU operation per kernel");
      }
    }
  }
  if (IsExpensive(p) && users > 1) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer %" + p.name() + " is expensive and has " + std::to_string(users) +
                      " consumers: fusing would recompute it");
  }
  if (IsExpensive(p) && consumer_groups.size() > 1) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "consumer %" + c.name() + " is computed in " +
                      std::to_string(consumer_groups.size()) + " kernels: fusing expensive %" +
                      p.name() + " would recompute it in each");
  }
  const auto& ops = c.operands();
  int64_t operand_index = std::find(ops.begin(), ops.end(), &p) - ops.begin();
  int64_t reuse = OperandReuse(c, operand_index);
  int64_t bytes = ShapeBytes(p.shape());
  if (reuse > 1 && (IsExpensive(p) || ClassOf(p) == OpClass::kBroadcast ||
                    bytes > options_.reread_limit_bytes)) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "consumer " + Describe(c) + " reads each element of %" + p.name() + " " +
                      std::to_string(reuse) + " times: fusing would recompute %" + p.name() + " (" +
                      FormatBytes(bytes) + ") on every read");
  }
  int64_t copies =
      static_cast<int64_t>(groups_of_[p.index_in_parent()].size() + consumer_groups.size());
  if (copies > options_.max_duplication) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "fusing %" + p.name() + " into " + Describe(c) + " would compute it in " +
                      std::to_string(copies) + " kernels (limit " +
                      std::to_string(options_.max_duplication) + ")");
  }
  if (users > options_.max_duplication && pc != OpClass::kBroadcast) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer %" + p.name() + " has " + std::to_string(users) +
                      " consumers: copying it into each kernel would bloat them (limit " +
                      std::to_string(options_.max_duplication) + ")");
  }
  for (int32_t g : consumer_groups) {
    if (std::optional<Refusal> why = CheckFit(groups_[g], p)) {
      return Refuse(p, c, rule, why->kind, std::move(why->reason));
    }
  }
  std::string reason;
  switch (rule) {
    case FusionRule::kOutput:
      reason = "output fusion: " + Describe(c) + " is an elementwise epilogue of %" + p.name();
      break;
    case FusionRule::kInput:
      reason = "input fusion into reduction %" + reduce->name();
      break;
    default:
      reason = "loop fusion: " + Describe(p) + " into " + Describe(c);
      break;
  }
  return {p.index_in_parent(), c.index_in_parent(), -1, rule, true, std::move(reason),
          DecisionKind::kProfitability};
}

// Inputs of `group` once `p`, one of its inputs, is computed inside it.
std::vector<const Instruction*> HeuristicPlanner::InputsWith(const Group& group,
                                                             const Instruction& p) {
  std::vector<const Instruction*> inputs;
  inputs.reserve(group.inputs.size() + p.operands().size());
  for (const Instruction* in : group.inputs) {
    if (in != &p) inputs.push_back(in);
  }
  for (const Instruction* operand : p.operands()) {
    if (std::find(inputs.begin(), inputs.end(), operand) == inputs.end()) {
      inputs.push_back(operand);
    }
  }
  return inputs;
}

TilingProblem HeuristicPlanner::ProblemOf(const Group& group,
                                          const Instruction* extra_contraction) const {
  TilingProblem problem;
  const Instruction* contraction =
      group.contraction != nullptr ? group.contraction : extra_contraction;
  if (group.opaque) return problem;
  if (contraction != nullptr) {
    problem.space = TilingProblem::Space::kContraction;
    problem.anchor = contraction;
  } else if (group.reduce != nullptr) {
    problem.space = TilingProblem::Space::kReduce;
    problem.anchor = group.reduce;
  } else {
    problem.space = TilingProblem::Space::kLoop;
    problem.anchor = group.root;
  }
  problem.outputs = group.outputs;
  return problem;
}

// Why `p` cannot join `group`, or nullopt when it can.
std::optional<Refusal> HeuristicPlanner::CheckFit(const Group& group, const Instruction& p) const {
  if (group.member_count + 1 > options_.max_kernel_instructions) {
    return Refusal{DecisionKind::kProfitability,
                   "the kernel of %" + group.root->name() + " already has " +
                       std::to_string(group.member_count) + " instructions (limit " +
                       std::to_string(options_.max_kernel_instructions) + ")"};
  }
  TilingProblem problem = ProblemOf(group, ClassOf(p) == OpClass::kContraction ? &p : nullptr);
  problem.inputs = InputsWith(group, p);
  if (static_cast<int64_t>(problem.inputs.size()) > options_.max_kernel_inputs) {
    return Refusal{DecisionKind::kProfitability,
                   "fusing %" + p.name() + " would make the kernel of %" + group.root->name() +
                       " read " + std::to_string(problem.inputs.size()) + " arrays (limit " +
                       std::to_string(options_.max_kernel_inputs) + ")"};
  }
  int64_t vmem = 0;
  if (!FitsScopedVmem(problem, options_.tiling, &vmem)) {
    // Tiling would fail: no block shape fits.
    return Refusal{DecisionKind::kLegality,
                   "fusing %" + p.name() + " into the kernel of %" + group.root->name() +
                       " would need " + FormatBytes(vmem) + " of VMEM, scoped VMEM is " +
                       FormatBytes(options_.tiling.scoped_vmem_bytes)};
  }
  return std::nullopt;
}

void HeuristicPlanner::Commit(const Instruction& p, const Instruction& c) {
  std::vector<int32_t>& mine = groups_of_[p.index_in_parent()];
  for (int32_t g : groups_of_[c.index_in_parent()]) {
    Group& group = groups_[g];
    group.inputs = InputsWith(group, p);
    ++group.member_count;
    if (ClassOf(p) == OpClass::kContraction) group.contraction = &p;
    mine.push_back(g);
  }
}

void HeuristicPlanner::StartGroup(const Instruction& p) {
  Group group;
  group.root = &p;
  group.member_count = 1;
  group.outputs = {&p};
  for (const Instruction* operand : p.operands()) {
    if (std::find(group.inputs.begin(), group.inputs.end(), operand) == group.inputs.end()) {
      group.inputs.push_back(operand);
    }
  }
  OpClass c = ClassOf(p);
  group.opaque = c == OpClass::kOpaque;
  group.first_root = group.last_root = p.index_in_parent();
  if (c == OpClass::kContraction) group.contraction = &p;
  if (c == OpClass::kReduce) group.reduce = &p;
  int32_t id = static_cast<int32_t>(groups_.size());
  groups_.push_back(std::move(group));
  groups_of_[p.index_in_parent()].push_back(id);
  own_group_[p.index_in_parent()] = id;
  rep_.push_back(id);
}

}  // namespace internal

std::vector<FusionEdge> HeuristicEdges(const hlo::Computation& computation,
                                       const PlannerOptions& options) {
  return internal::HeuristicPlanner(computation, options).Run();
}

}  // namespace kiln::fusion
