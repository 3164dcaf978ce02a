#include "compiler/hlo/computation.h"

#include <algorithm>

namespace kiln::hlo {

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* instr = instruction.get();
  instr->parent_ = this;
  for (Instruction* operand : instr->operands_) {
    auto& users = operand->users_;
    if (users.empty() || (users.back() != instr &&
                          std::find(users.begin(), users.end(), instr) == users.end())) {
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
