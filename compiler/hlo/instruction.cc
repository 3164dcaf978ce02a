#include "compiler/hlo/instruction.h"

#include <algorithm>
#include <new>

#include "compiler/hlo/ir_arena.h"

namespace kiln::hlo {

void InstructionDeleter::operator()(Instruction* instruction) const {
  if (instruction == nullptr) return;
  if (instruction->in_arena_) {
    instruction->~Instruction();  // the arena keeps the memory
  } else {
    delete instruction;
  }
}

InstructionPtr Instruction::Make(Opcode opcode, Shape shape, IrArena* arena) {
  if (arena == nullptr) {
    return InstructionPtr(new Instruction(opcode, std::move(shape), std::pmr::new_delete_resource()));
  }
  void* memory = arena->allocate(sizeof(Instruction), alignof(Instruction));
  auto* instr = new (memory) Instruction(opcode, std::move(shape), arena);
  instr->in_arena_ = true;
  return InstructionPtr(instr);
}

InstructionPtr Instruction::Create(Opcode opcode, Shape shape,
                                   std::span<Instruction* const> operands, std::string name,
                                   IrArena* arena) {
  InstructionPtr instr = Make(opcode, std::move(shape), arena);
  instr->operands_.assign(operands.begin(), operands.end());
  instr->name_ = std::move(name);
  return instr;
}

InstructionPtr Instruction::CreateParameter(int64_t number, Shape shape, std::string name,
                                            IrArena* arena) {
  InstructionPtr instr = Create(Opcode::kParameter, std::move(shape), {}, std::move(name), arena);
  instr->parameter_number_ = number;
  return instr;
}

InstructionPtr Instruction::CreateConstant(Literal literal, std::string name, IrArena* arena) {
  InstructionPtr instr = Create(Opcode::kConstant, literal.shape(), {}, std::move(name), arena);
  instr->literal_ = std::make_unique<Literal>(std::move(literal));
  return instr;
}

InstructionPtr Instruction::CreateClone(const Instruction& original,
                                        std::span<Instruction* const> operands, std::string name) {
  InstructionPtr clone;
  if (original.literal() != nullptr) {
    clone = CreateConstant(*original.literal(), std::move(name));
  } else if (original.opcode() == Opcode::kParameter) {
    clone = CreateParameter(original.parameter_number(), original.shape(), std::move(name));
  } else {
    clone = Create(original.opcode(), original.shape(), std::move(operands), std::move(name));
  }
  for (const Attribute& attribute : original.attributes()) {
    if (attribute.kind != Attribute::Kind::kInstructions) clone->AddAttribute(attribute);
  }
  clone->set_async_wrapped_opcode(original.async_wrapped_opcode());
  clone->set_source_line(original.source_line());
  return clone;
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

Status Instruction::ReplaceOperandWith(int64_t index, Instruction* new_operand) {
  if (index < 0 || index >= operand_count()) {
    return InvalidArgumentError("instruction %" + name_ + ": no operand " + std::to_string(index));
  }
  if (new_operand == nullptr || new_operand->parent_ != parent_ || new_operand == this) {
    return InvalidArgumentError("instruction %" + name_ +
                                ": replacement operand must be another instruction of the same "
                                "computation");
  }
  Instruction* old_operand = operands_[index];
  if (old_operand == new_operand) return Ok();
  // Whether this uses an operand is read from its own operand list, which is
  // short; the operands' user lists may be long.
  const bool already_user =
      std::find(operands_.begin(), operands_.end(), new_operand) != operands_.end();
  operands_[index] = new_operand;
  if (std::find(operands_.begin(), operands_.end(), old_operand) == operands_.end()) {
    std::erase(old_operand->users_, this);
  }
  if (!already_user) new_operand->users_.push_back(this);
  return Ok();
}

void Instruction::SetTextAttribute(std::string_view name, std::string value) {
  for (Attribute& a : attributes_) {
    if (a.name == name) {
      a.kind = Attribute::Kind::kText;
      a.value = std::move(value);
      return;
    }
  }
  Attribute a;
  a.name = std::string(name);
  a.value = std::move(value);
  attributes_.push_back(std::move(a));
}

std::string Instruction::OpcodeText() const {
  if (async_wrapped_.empty()) return std::string(OpcodeName(opcode_));
  std::string_view suffix = opcode_ == Opcode::kAsyncStart    ? "-start"
                            : opcode_ == Opcode::kAsyncUpdate ? "-update"
                                                              : "-done";
  return async_wrapped_ + std::string(suffix);
}

}  // namespace kiln::hlo
