#include "compiler/hlo/computation.h"

#include <algorithm>

namespace kiln::hlo {

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
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

}  // namespace kiln::hlo
