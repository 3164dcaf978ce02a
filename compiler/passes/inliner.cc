#include "compiler/passes/inliner.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::passes {
namespace {

using hlo::Instruction;

bool IsInlinable(const Instruction& instr, hlo::Opcode opcode) {
  if (instr.opcode() != opcode || instr.called_computations().size() != 1 ||
      !instr.control_predecessors().empty()) {
    return false;
  }
  const hlo::Computation* body = instr.called_computations()[0];
  if (body == nullptr || body->root() == nullptr || body->parameter_count() != instr.operand_count()) return false;
  if (opcode == hlo::Opcode::kCall) {  // leaves only (CallInliner::Run)
    for (const auto& inner : body->instructions()) {
      if (inner->opcode() == hlo::Opcode::kCall) return false;
    }
  }
  return true;
}

class Inliner {
 public:
  // Expands the `opcode` instructions of `computation` while their clones
  // fit in `budget` (nullptr: no limit), which it decreases.
  Inliner(hlo::Computation& computation, hlo::Opcode opcode, int64_t* budget = nullptr)
      : computation_(computation), opcode_(opcode), budget_(budget) {
    for (const auto& instr : computation.instructions()) names_.emplace(instr->name());
  }

  Result<bool> Run() {
    std::vector<Instruction*> original;
    original.reserve(computation_.instructions().size());
    for (const auto& instr : computation_.instructions()) original.push_back(instr.get());
    // An instruction that is some instruction's control predecessor stays.
    std::unordered_set<const Instruction*> ordered;
    for (Instruction* instr : original) {
      ordered.insert(instr->control_predecessors().begin(), instr->control_predecessors().end());
    }
    std::unordered_map<const Instruction*, std::vector<Instruction*>> expansions;
    for (Instruction* instr : original) {
      if (!IsInlinable(*instr, opcode_) || ordered.contains(instr)) continue;
      if (budget_ != nullptr) {
        const int64_t callee = instr->called_computations()[0]->instruction_count();
        if (callee > *budget_) continue;
        *budget_ -= callee;
      }
      KILN_ASSIGN_OR_RETURN(std::vector<Instruction*> clones, Expand(*instr));
      expansions.emplace(instr, std::move(clones));
    }
    if (expansions.empty()) return false;
    // Clones go where their instruction was: after its operands, before its
    // users.
    std::vector<Instruction*> order;
    order.reserve(computation_.instructions().size());
    for (Instruction* instr : original) {
      auto it = expansions.find(instr);
      if (it != expansions.end()) order.insert(order.end(), it->second.begin(), it->second.end());
      order.push_back(instr);
    }
    KILN_RETURN_IF_ERROR(computation_.SetInstructionOrder(order));
    // The expanded instructions have no users left.
    std::vector<Instruction*> expanded;
    for (Instruction* instr : original) {
      if (expansions.contains(instr)) expanded.push_back(instr);
    }
    KILN_RETURN_IF_ERROR(computation_.RemoveInstructions(expanded));
    return true;
  }

 private:
  std::string UniqueName(const std::string& base) {
    std::string name = base;
    for (int suffix = 1; names_.contains(name); ++suffix) {
      name = base + "." + std::to_string(suffix);
    }
    names_.insert(name);
    return name;
  }

  // Clones the computation `caller` (a fusion or call) calls into the
  // computation and redirects its users; returns the clones in topological
  // order.
  Result<std::vector<Instruction*>> Expand(Instruction& caller) {
    const hlo::Computation& body = *caller.called_computations()[0];
    std::vector<Instruction*> value_of(body.instructions().size(), nullptr);
    std::vector<Instruction*> clones;
    for (const auto& inner : body.instructions()) {
      if (inner->opcode() == hlo::Opcode::kParameter) {
        value_of[inner->index_in_parent()] = caller.operand(inner->parameter_number());
        continue;
      }
      std::vector<Instruction*> operands;
      for (const Instruction* operand : inner->operands()) {
        Instruction* mapped = value_of[operand->index_in_parent()];
        if (mapped == nullptr) {
          return InvalidArgumentError(std::string(hlo::OpcodeName(caller.opcode())) + " %" +
                                      std::string(caller.name()) + ": %" + std::string(inner->name()) +
                                      " uses %" + std::string(operand->name()) + " before it is defined");
        }
        operands.push_back(mapped);
      }
      std::string name = UniqueName(std::string(caller.name()) + "." + std::string(inner->name()));
      // Control edges inside the called computation do not carry over.
      hlo::InstructionPtr clone = Instruction::CreateClone(*inner, std::move(operands), std::move(name));
      Instruction* added = computation_.AddInstruction(std::move(clone));
      value_of[inner->index_in_parent()] = added;
      clones.push_back(added);
    }
    Instruction* replacement = value_of[body.root()->index_in_parent()];
    if (!clones.empty() && replacement == clones.back()) {
      if (replacement->shape().Compatible(caller.shape())) {
        replacement->set_shape(caller.shape());  // keep the instruction's layout
      }
      const hlo::Attribute* sharding = caller.FindAttribute("sharding");
      if (sharding != nullptr && replacement->FindAttribute("sharding") == nullptr) {
        replacement->AddAttribute(*sharding);
      }
    }
    KILN_RETURN_IF_ERROR(computation_.ReplaceAllUsesWith(&caller, replacement));
    return clones;
  }

  hlo::Computation& computation_;
  const hlo::Opcode opcode_;
  int64_t* budget_;
  std::unordered_set<std::string> names_;
};

}  // namespace

Result<bool> InlineFusions(hlo::Computation& computation) {
  return Inliner(computation, hlo::Opcode::kFusion).Run();
}

Result<bool> FusionInliner::Run(hlo::Module& module) {
  bool changed = false;
  // Fused computations themselves may hold fusions; only callers outside
  // them matter for planning, but expanding every computation is simplest.
  for (const auto& computation : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool inlined, InlineFusions(*computation));
    changed |= inlined;
  }
  return changed;
}

Result<bool> CallInliner::Run(hlo::Module& module) {
  // Leaves first: a call is expanded once its callee calls nothing, so
  // expanding never adds call sites, and a callee whose calls stay (over
  // the budget) keeps its callers' calls too.
  int64_t budget = max_added_instructions_;
  bool changed = false;
  while (true) {
    bool round = false;
    for (const auto& computation : module.computations()) {
      bool calls = false;
      for (const auto& instr : computation->instructions()) calls |= instr->opcode() == hlo::Opcode::kCall;
      if (!calls) continue;
      KILN_ASSIGN_OR_RETURN(bool inlined, Inliner(*computation, hlo::Opcode::kCall, &budget).Run());
      round |= inlined;
    }
    if (!round) return changed;
    changed = true;
  }
}

}  // namespace kiln::passes
