#include "compiler/hlo/computation.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace kiln::hlo {

Instruction* Computation::AddInstruction(InstructionPtr instruction) {
  Instruction* instr = instruction.get();
  instr->parent_ = this;
  instr->index_in_parent_ = static_cast<int64_t>(instructions_.size());
  for (Instruction* operand : instr->operands_) {
    auto& users = operand->users_;
    // All of an instruction's operand edges are added here at once, so a
    // repeated operand finds itself at the back: O(1) de-duplication.
    if (users.empty() || users.back() != instr) {
      users.push_back(instr);
    }
  }
  if (instr->opcode() == Opcode::kParameter && instr->parameter_number() >= 0) {
    size_t n = static_cast<size_t>(instr->parameter_number());
    if (n < (size_t{1} << 20)) {
      if (parameters_.size() <= n) parameters_.resize(n + 1, nullptr);
      if (parameters_[n] == nullptr) parameters_[n] = instr;
    }
  }
  instructions_.push_back(std::move(instruction));
  return instr;
}

Status Computation::ReplaceAllUsesWith(Instruction* old, Instruction* replacement) {
  if (old == nullptr || replacement == nullptr || old->parent_ != this ||
      replacement->parent_ != this) {
    return InvalidArgumentError("computation %" + name_ +
                                ": ReplaceAllUsesWith needs two instructions of this computation");
  }
  if (old == replacement) return Ok();
  // Moves the user lists in one sweep: linear in the users' operands, even
  // for a value with a million users or along a million-long chain.
  std::vector<Instruction*> kept;
  for (Instruction* user : old->users_) {
    if (user == replacement) {  // would create a self-loop
      kept.push_back(user);
      continue;
    }
    auto& ops = user->operands_;
    const bool already_user = std::find(ops.begin(), ops.end(), replacement) != ops.end();
    std::replace(ops.begin(), ops.end(), old, replacement);
    if (!already_user) replacement->users_.push_back(user);
  }
  old->users_.assign(kept.begin(), kept.end());
  if (root_ == old) root_ = replacement;
  return Ok();
}

Status Computation::RemoveInstructions(std::span<Instruction* const> dead) {
  if (dead.empty()) return Ok();
  std::unordered_set<const Instruction*> doomed(dead.begin(), dead.end());
  for (const Instruction* instr : dead) {
    std::string where = "computation %" + name_ + ": cannot remove %" +
                        (instr != nullptr ? std::string(instr->name()) : std::string("<null>"));
    if (instr == nullptr || instr->parent_ != this) {
      return InvalidArgumentError(where + ": not an instruction of this computation");
    }
    if (instr == root_) return FailedPreconditionError(where + ": it is the root");
    if (instr->opcode() == Opcode::kParameter) return FailedPreconditionError(where + ": it is a parameter");
    for (const Instruction* user : instr->users_) {
      if (!doomed.contains(user)) {
        return FailedPreconditionError(where + ": it is used by %" + std::string(user->name()));
      }
    }
  }
  for (const auto& instr : instructions_) {
    if (doomed.contains(instr.get())) continue;
    for (const Instruction* pred : instr->control_preds_) {
      if (doomed.contains(pred)) {
        return FailedPreconditionError("computation %" + name_ + ": cannot remove %" +
                                       std::string(pred->name()) + ": it is a control predecessor of %" +
                                       std::string(instr->name()));
      }
    }
  }
  // Each surviving operand's user list is swept once, however many of its
  // users die.
  std::unordered_set<Instruction*> survivors_used;
  for (Instruction* instr : dead) {
    for (Instruction* operand : instr->operands_) {
      if (!doomed.contains(operand)) survivors_used.insert(operand);
    }
  }
  for (Instruction* operand : survivors_used) {
    std::erase_if(operand->users_, [&](const Instruction* u) { return doomed.contains(u); });
  }
  std::erase_if(instructions_, [&](const InstructionPtr& instr) {
    return doomed.contains(instr.get());
  });
  for (size_t i = 0; i < instructions_.size(); ++i) {
    instructions_[i]->index_in_parent_ = static_cast<int64_t>(i);
  }
  return Ok();
}

Status Computation::SetInstructionOrder(std::span<Instruction* const> order) {
  if (order.size() != instructions_.size()) {
    return InvalidArgumentError("computation %" + name_ + ": new order has " + std::to_string(order.size()) +
                                " instructions, the computation has " + std::to_string(instructions_.size()));
  }
  std::vector<char> placed(instructions_.size(), 0);
  for (const Instruction* instr : order) {
    if (instr == nullptr || instr->parent_ != this || placed[instr->index_in_parent_]) {
      return InvalidArgumentError("computation %" + name_ + ": new order is not a permutation of its instructions");
    }
    placed[instr->index_in_parent_] = 1;
  }
  std::vector<InstructionPtr> reordered(instructions_.size());
  for (size_t i = 0; i < order.size(); ++i) {
    reordered[i] = std::move(instructions_[order[i]->index_in_parent_]);
  }
  instructions_ = std::move(reordered);
  for (size_t i = 0; i < instructions_.size(); ++i) {
    instructions_[i]->index_in_parent_ = static_cast<int64_t>(i);
  }
  return Ok();
}

}  // namespace kiln::hlo
