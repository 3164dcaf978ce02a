#include "compiler/fusion/body_fusion.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/fusion/kernel_formation.h"

namespace kiln::fusion {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

bool RunsCalledComputations(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall;
}

}  // namespace

// The computations control flow runs, callers before callees: reached from
// the entry through while loops and conditionals, then through any
// control flow or call inside those. A computation some other op calls (a
// reducer, comparator, fused computation or async wrapper) is left alone.
std::vector<Computation*> ControlFlowComputations(const hlo::Module& module) {
  std::unordered_set<const Computation*> excluded;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (RunsCalledComputations(instr->opcode())) continue;
      excluded.insert(instr->called_computations().begin(), instr->called_computations().end());
    }
  }
  std::vector<Computation*> out;
  std::unordered_set<const Computation*> walked, fused;
  // (computation, whether control flow runs it)
  std::vector<std::pair<Computation*, bool>> stack = {{module.entry(), false}};
  while (!stack.empty()) {
    auto [computation, under_control_flow] = stack.back();
    stack.pop_back();
    for (const auto& instr : computation->instructions()) {
      if (!RunsCalledComputations(instr->opcode())) continue;
      // A call in the entry runs its callee as one kernel; inside control
      // flow, a callee's instructions are steps like the caller's.
      const bool under = under_control_flow || instr->opcode() != Opcode::kCall;
      for (Computation* callee : instr->called_computations()) {
        if (excluded.contains(callee)) continue;
        if (under && fused.insert(callee).second) {
          out.push_back(callee);
          stack.emplace_back(callee, true);
        } else if (!under && walked.insert(callee).second) {
          stack.emplace_back(callee, false);
        }
      }
    }
  }
  return out;
}

namespace {

std::string_view FusionKindText(const Kernel& kernel, const std::vector<Instruction*>& at) {
  switch (kernel.kind) {
    case KernelKind::kInput: return "kInput";
    case KernelKind::kOutput: return "kOutput";
    case KernelKind::kMultiOutput:
      for (int64_t index : kernel.instructions) {
        if (at[index]->opcode() == Opcode::kReduce) return "kInput";
      }
      return "kLoop";
    default: return "kLoop";
  }
}

// Rewrites one computation along its plan.
class BodyOutliner {
 public:
  BodyOutliner(hlo::Module& module, Computation& computation) : module_(module), computation_(computation) {
    for (const auto& instr : computation.instructions()) at_.push_back(instr.get());
  }

  // Outlines the plan's kernels of several instructions; returns how many
  // instructions moved into fusions, and names each kernel's step in
  // `kernels` (one per plan kernel).
  Result<int64_t> Run(const FusionPlan& plan, std::vector<BodyKernel>& kernels) {
    std::unordered_set<const Instruction*> ordered;  // instructions with control edges
    for (Instruction* instr : at_) {
      if (instr->control_predecessors().empty()) continue;
      ordered.insert(instr);
      ordered.insert(instr->control_predecessors().begin(), instr->control_predecessors().end());
    }
    // Every fusion is built from the unchanged graph first; then the
    // kernels' roots are replaced by what the fusions return.
    std::vector<std::pair<Instruction*, Instruction*>> replacements;
    std::unordered_set<const Instruction*> outlined;
    int64_t moved = 0;
    for (const Kernel& kernel : plan.kernels) {
      BodyKernel& named = kernels.emplace_back();
      named.instructions = kernel.instructions;
      named.roots = kernel.roots;
      named.inputs = kernel.inputs;
      if (kernel.instructions.size() < 2) {
        if (kernel.instructions.size() == 1) named.step = at_[kernel.instructions.front()]->name();
        continue;
      }
      bool has_control_edges = false;
      for (int64_t index : kernel.instructions) has_control_edges |= ordered.contains(at_[index]);
      if (has_control_edges) continue;
      KILN_ASSIGN_OR_RETURN(named.step, Outline(kernel, replacements));
      for (int64_t index : kernel.instructions) outlined.insert(at_[index]);
      moved += static_cast<int64_t>(kernel.instructions.size());
    }
    if (moved == 0) return 0;
    for (auto [root, value] : replacements) KILN_RETURN_IF_ERROR(computation_.ReplaceAllUsesWith(root, value));
    KILN_RETURN_IF_ERROR(RemoveOutlined(outlined));
    KILN_RETURN_IF_ERROR(Reorder());
    return moved;
  }

 private:
  std::string UniqueComputationName(const std::string& base) {
    std::string name = base;
    for (int suffix = 1; module_.FindComputation(name) != nullptr; ++suffix) name = base + "." + std::to_string(suffix);
    return name;
  }

  std::string UniqueInstructionName(const std::string& base) {
    if (names_.empty()) {
      for (Instruction* instr : at_) names_.emplace(instr->name());
    }
    std::string name = base;
    for (int suffix = 1; names_.contains(name); ++suffix) name = base + "." + std::to_string(suffix);
    names_.insert(name);
    return name;
  }

  // Builds the fused computation and the fusion instruction of `kernel`;
  // adds (root, value to use instead) pairs to `replacements`. Returns the
  // fusion's name.
  Result<std::string> Outline(const Kernel& kernel, std::vector<std::pair<Instruction*, Instruction*>>& replacements) {
    const Instruction& first_root = *at_[kernel.roots.front()];
    auto fused =
        std::make_unique<Computation>(UniqueComputationName("fused_" + std::string(first_root.name())));
    std::unordered_map<const Instruction*, Instruction*> clone_of;
    std::vector<Instruction*> operands;
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      Instruction* input = at_[kernel.inputs[i]];
      operands.push_back(input);
      clone_of[input] = fused->AddInstruction(
          Instruction::CreateParameter(static_cast<int64_t>(i), input->shape(), "param_" + std::to_string(i)));
    }
    for (int64_t index : kernel.instructions) {
      const Instruction& original = *at_[index];
      if (clone_of.contains(&original)) {
        return InternalError("fusing %" + computation_.name() + ": %" + std::string(original.name()) +
                             " is listed twice in its kernel");
      }
      std::vector<Instruction*> cloned_operands;
      for (const Instruction* operand : original.operands()) {
        auto it = clone_of.find(operand);
        if (it == clone_of.end()) {
          return InternalError("fusing %" + computation_.name() + ": operand %" +
                               std::string(operand->name()) + " of %" + std::string(original.name()) +
                               " is neither an input of its kernel nor computed in it");
        }
        cloned_operands.push_back(it->second);
      }
      clone_of[&original] =
          fused->AddInstruction(Instruction::CreateClone(original, std::move(cloned_operands), original.name()));
    }
    Instruction* fusion = nullptr;
    auto make_fusion = [&](hlo::Shape shape) {
      auto instr = Instruction::Create(Opcode::kFusion, std::move(shape), operands,
                                       UniqueInstructionName("fusion." + std::string(first_root.name())));
      instr->AddAttribute(hlo::Attribute::Text("kind", FusionKindText(kernel, at_)));
      return instr;
    };
    if (kernel.roots.size() == 1) {
      fused->set_root(clone_of.at(&first_root));
      fusion = computation_.AddInstruction(make_fusion(first_root.shape()));
      replacements.emplace_back(at_[kernel.roots.front()], fusion);
    } else {
      std::vector<hlo::Shape> shapes;
      std::vector<Instruction*> values;
      for (int64_t root : kernel.roots) {
        shapes.push_back(at_[root]->shape());
        values.push_back(clone_of.at(at_[root]));
      }
      hlo::Shape tuple = hlo::Shape::Tuple(shapes);
      fused->set_root(fused->AddInstruction(Instruction::Create(Opcode::kTuple, tuple, std::move(values), "tuple")));
      fusion = computation_.AddInstruction(make_fusion(tuple));
      for (size_t i = 0; i < kernel.roots.size(); ++i) {
        Instruction* root = at_[kernel.roots[i]];
        auto element = Instruction::Create(Opcode::kGetTupleElement, root->shape(), {fusion},
                                           UniqueInstructionName(std::string(root->name()) + ".out"));
        element->AddAttribute(hlo::Attribute::Text("index", std::to_string(i)));
        replacements.emplace_back(root, computation_.AddInstruction(std::move(element)));
      }
    }
    Computation* callee = module_.InsertComputation(std::move(fused), &computation_);
    fusion->AddAttribute(hlo::Attribute::Calls("calls", callee));
    return std::string(fusion->name());
  }

  // Removes the outlined instructions nothing reads any more (a cheap
  // producer duplicated into a kernel that stays keeps its original).
  Status RemoveOutlined(const std::unordered_set<const Instruction*>& outlined) {
    std::unordered_set<const Instruction*> dead_set;
    std::vector<Instruction*> dead;
    for (auto it = at_.rbegin(); it != at_.rend(); ++it) {
      Instruction* instr = *it;
      if (!outlined.contains(instr) || instr == computation_.root()) continue;
      bool unused = true;
      for (const Instruction* user : instr->users()) unused &= dead_set.contains(user);
      if (!unused) continue;
      dead_set.insert(instr);
      dead.push_back(instr);
    }
    return computation_.RemoveInstructions(dead);
  }

  // Operands (and control predecessors) before users, keeping the old
  // order where it already is one: the fusions were appended last.
  Status Reorder() {
    const auto& list = computation_.instructions();
    std::vector<uint8_t> state(list.size(), 0);  // 0 new, 1 open, 2 placed
    std::vector<Instruction*> order;
    order.reserve(list.size());
    std::vector<std::pair<Instruction*, size_t>> stack;
    for (const auto& start : list) {
      if (state[start->index_in_parent()] != 0) continue;
      stack.emplace_back(start.get(), 0);
      state[start->index_in_parent()] = 1;
      while (!stack.empty()) {
        auto& [instr, next] = stack.back();
        const size_t operands = instr->operands().size();
        const size_t edges = operands + instr->control_predecessors().size();
        if (next == edges) {
          state[instr->index_in_parent()] = 2;
          order.push_back(instr);
          stack.pop_back();
          continue;
        }
        Instruction* before = next < operands ? instr->operand(static_cast<int64_t>(next))
                                              : instr->control_predecessors()[next - operands];
        ++next;
        uint8_t& seen = state[before->index_in_parent()];
        if (seen == 1)
          return InternalError("fusing %" + computation_.name() + " closed a cycle through %" +
                               std::string(before->name()));
        if (seen == 0) {
          seen = 1;
          stack.emplace_back(before, 0);
        }
      }
    }
    return computation_.SetInstructionOrder(order);
  }

  hlo::Module& module_;
  Computation& computation_;
  std::vector<Instruction*> at_;  // the instructions as planned, by index
  std::unordered_set<std::string> names_;
};

}  // namespace

bool HasControlFlowBodies(const hlo::Module& module) {
  return module.entry() != nullptr && !ControlFlowComputations(module).empty();
}

PlannerOptions BodyPlannerOptions(const PlannerOptions& options) {
  PlannerOptions body_options = options;
  body_options.contractions_run_on_plan_tiles = false;  // each body dot is tiled alone
  return body_options;
}

Result<BodyFusionStats> FuseControlFlowBodies(hlo::Module& module, const PlannerOptions& options,
                                             const BodyFlips& flips) {
  BodyFusionStats stats;
  if (module.entry() == nullptr) return stats;
  const PlannerOptions body_options = BodyPlannerOptions(options);
  size_t flipped = 0;
  for (Computation* computation : ControlFlowComputations(module)) {
    Result<FusionPlan> plan = PlanComputation(*computation, PlanKind::kHeuristic, body_options);
    if (!plan) return std::unexpected(plan.error().WithContext("planning %" + computation->name()));
    if (auto it = flips.find(computation->name()); it != flips.end()) {
      ++flipped;
      FusionPlan edited;
      edited.kind = PlanKind::kTuned;
      Result<std::vector<FusionEdge>> edges = FlipEdges(*plan, it->second);
      if (!edges) return std::unexpected(edges.error().WithContext("flips in %" + computation->name()));
      edited.edges = *std::move(edges);
      Status formed = FormKernels(*computation, body_options.tiling, edited);
      if (!formed) return std::unexpected(formed.error().WithContext("flips in %" + computation->name()));
      *plan = std::move(edited);
    }
    BodyDecisions& named = stats.decisions.emplace_back();
    named.computation = computation->name();
    named.decisions = NameDecisions(*computation, plan->edges);
    const int64_t fusions_before = static_cast<int64_t>(module.computations().size());
    KILN_ASSIGN_OR_RETURN(int64_t moved, BodyOutliner(module, *computation).Run(*plan, named.kernels));
    ++stats.computations;
    stats.fusions += static_cast<int64_t>(module.computations().size()) - fusions_before;
    stats.fused_instructions += moved;
  }
  if (flipped != flips.size()) {
    for (const auto& [name, edges] : flips) {
      bool planned = false;
      for (const BodyDecisions& d : stats.decisions) planned |= d.computation == name;
      if (!planned) return InvalidArgumentError("flips in %" + name + ": no loop body or branch of that name is planned");
    }
  }
  return stats;
}

}  // namespace kiln::fusion
