#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

std::unique_ptr<Instruction> Instruction::Create(Opcode opcode, Shape shape,
                                                 std::vector<Instruction*> operands,
                                                 std::string name) {
  auto instr = std::unique_ptr<Instruction>(new Instruction(opcode, std::move(shape)));
  instr->operands_ = std::move(operands);
  instr->name_ = std::move(name);
  return instr;
}

std::unique_ptr<Instruction> Instruction::CreateParameter(int64_t number, Shape shape,
                                                          std::string name) {
  auto instr = Create(Opcode::kParameter, std::move(shape), {}, std::move(name));
  instr->parameter_number_ = number;
  return instr;
}

std::unique_ptr<Instruction> Instruction::CreateConstant(Literal literal, std::string name) {
  auto instr = Create(Opcode::kConstant, literal.shape(), {}, std::move(name));
  instr->literal_ = std::make_unique<Literal>(std::move(literal));
  return instr;
}

const Attribute* Instruction::FindAttribute(std::string_view name) const {
  for (const Attribute& a : attributes_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const std::string* Instruction::AttributeText(std::string_view name) const {
  const Attribute* a = FindAttribute(name);
  if (a == nullptr ||
      (a->kind != Attribute::Kind::kText && a->kind != Attribute::Kind::kRaw)) {
    return nullptr;
  }
  return &a->value;
}

void Instruction::AddAttribute(Attribute attribute) {
  if (attribute.kind == Attribute::Kind::kComputations) {
    called_.insert(called_.end(), attribute.computations.begin(), attribute.computations.end());
  } else if (attribute.kind == Attribute::Kind::kInstructions) {
    control_preds_.insert(control_preds_.end(), attribute.instructions.begin(),
                          attribute.instructions.end());
  }
  attributes_.push_back(std::move(attribute));
}

std::string Instruction::OpcodeText() const {
  if (async_wrapped_.empty()) return std::string(OpcodeName(opcode_));
  std::string_view suffix = opcode_ == Opcode::kAsyncStart    ? "-start"
                            : opcode_ == Opcode::kAsyncUpdate ? "-update"
                                                              : "-done";
  return async_wrapped_ + std::string(suffix);
}

}  // namespace kiln::hlo
