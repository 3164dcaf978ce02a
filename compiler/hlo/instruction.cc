#include "compiler/hlo/instruction.h"

#include <algorithm>
#include <memory>
#include <new>

#include "compiler/hlo/ir_arena.h"

namespace kiln::hlo {

void InstructionDeleter::operator()(Instruction* instruction) const {
  // An arena instruction's name and lists are arena memory (pmr containers
  // never change their resource) and its shape and literal are kept by the
  // arena: there is nothing to release until the arena dies.
  if (instruction != nullptr && !instruction->in_arena_) delete instruction;
}

Instruction::~Instruction() {
  if (in_arena_) {
    shape_.Forget();  // borrowed
    return;
  }
  delete literal_;
}

IrArena& Instruction::arena() const { return *static_cast<IrArena*>(operands_.get_allocator().resource()); }

InstructionPtr Instruction::Make(Opcode opcode, Shape shape, IrArena* arena) {
  if (arena == nullptr) {
    auto* instr = new Instruction(opcode, std::pmr::new_delete_resource());
    instr->shape_ = std::move(shape);
    return InstructionPtr(instr);
  }
  void* memory = arena->allocate(sizeof(Instruction), alignof(Instruction));
  auto* instr = new (memory) Instruction(opcode, arena);
  instr->in_arena_ = true;
  instr->shape_ = Shape::Borrow(arena->KeepShape(std::move(shape)));
  return InstructionPtr(instr);
}

void Instruction::set_shape(Shape shape) {
  if (!in_arena_) {
    shape_ = std::move(shape);
    return;
  }
  shape_.Forget();
  shape_ = Shape::Borrow(arena().KeepShape(std::move(shape)));
}

InstructionPtr Instruction::Create(Opcode opcode, Shape shape, std::span<Instruction* const> operands,
                                   std::string_view name, IrArena* arena) {
  InstructionPtr instr = Make(opcode, std::move(shape), arena);
  instr->operands_.assign(operands.begin(), operands.end());
  instr->name_.assign(name);
  return instr;
}

InstructionPtr Instruction::CreateParameter(int64_t number, Shape shape, std::string_view name,
                                            IrArena* arena) {
  InstructionPtr instr = Create(Opcode::kParameter, std::move(shape), {}, name, arena);
  instr->parameter_number_ = number;
  return instr;
}

InstructionPtr Instruction::CreateConstant(Literal literal, std::string_view name, IrArena* arena) {
  InstructionPtr instr = Create(Opcode::kConstant, literal.shape(), {}, name, arena);
  auto value = std::make_unique<Literal>(std::move(literal));
  instr->literal_ = instr->in_arena_ ? instr->arena().KeepLiteral(std::move(value)) : value.release();
  return instr;
}

InstructionPtr Instruction::CreateClone(const Instruction& original, std::span<Instruction* const> operands,
                                        std::string_view name) {
  InstructionPtr clone;
  if (original.literal() != nullptr) {
    clone = CreateConstant(*original.literal(), name);
  } else if (original.opcode() == Opcode::kParameter) {
    clone = CreateParameter(original.parameter_number(), original.shape(), name);
  } else {
    clone = Create(original.opcode(), original.shape(), operands, name);
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

const std::pmr::string* Instruction::AttributeText(std::string_view name) const {
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
    return InvalidArgumentError("instruction %" + std::string(name_) + ": no operand " +
                                std::to_string(index));
  }
  if (new_operand == nullptr || new_operand->parent_ != parent_ || new_operand == this) {
    return InvalidArgumentError("instruction %" + std::string(name_) +
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

void Instruction::SetTextAttribute(std::string_view name, std::string_view value) {
  for (Attribute& a : attributes_) {
    if (a.name == name) {
      a.kind = Attribute::Kind::kText;
      a.value = value;
      return;
    }
  }
  Attribute& a = attributes_.emplace_back();  // on this instruction's list memory
  a.name = name;
  a.value = value;
}

std::string Instruction::OpcodeText() const {
  if (async_wrapped_.empty()) return std::string(OpcodeName(opcode_));
  std::string_view suffix = opcode_ == Opcode::kAsyncStart    ? "-start"
                            : opcode_ == Opcode::kAsyncUpdate ? "-update"
                                                              : "-done";
  return std::string(async_wrapped_) + std::string(suffix);
}

}  // namespace kiln::hlo
