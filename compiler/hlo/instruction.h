// One HLO instruction: an opcode applied to operands, producing a shape.
//
// Ownership: a Computation owns its instructions (made through the Create*
// factories and handed to Computation::AddInstruction); operands, users,
// called computations and control predecessors are non-owning pointers
// into the same module. An instruction lives either on the heap or, given
// an arena (the parser passes its module's), in that arena together with
// its name and its attribute, operand, user, callee and control lists,
// while the arena keeps its shape and literal (ir_arena.h). Nothing of an
// arena instruction needs releasing, so it is never destroyed: removing
// one leaves it in place, and a dying module drops its arena instructions
// without reading them. InstructionPtr's deleter knows which kind it has.
// An arena instruction must not outlive its arena.
// Not thread-safe for mutation; concurrent reads are fine.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/attribute.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/opcode.h"
#include "compiler/hlo/shape.h"

namespace kiln::hlo {

class Computation;
class Instruction;
class IrArena;

// Destroys a heap instruction; leaves one placed in an arena (whose memory,
// shape and literal the arena keeps until it dies) as it is.
struct InstructionDeleter {
  void operator()(Instruction* instruction) const;
};
using InstructionPtr = std::unique_ptr<Instruction, InstructionDeleter>;

class Instruction {
 public:
  // Factories. Operands must belong to the computation the instruction is
  // added to. With an `arena`, the instruction and its lists are placed
  // there; it must then join a computation of the module that owns the
  // arena.
  static InstructionPtr Create(Opcode opcode, Shape shape, std::span<Instruction* const> operands,
                               std::string_view name = {}, IrArena* arena = nullptr);
  static InstructionPtr Create(Opcode opcode, Shape shape, std::initializer_list<Instruction*> operands,
                               std::string_view name = {}) {
    return Create(opcode, std::move(shape), std::span<Instruction* const>(operands.begin(), operands.size()),
                  name);
  }
  static InstructionPtr CreateParameter(int64_t number, Shape shape, std::string_view name = {},
                                        IrArena* arena = nullptr);
  static InstructionPtr CreateConstant(Literal literal, std::string_view name = {}, IrArena* arena = nullptr);
  // A copy of `original` (opcode, shape, literal, attributes, async wrapper,
  // source line) named `name` and reading `operands`; control edges do not
  // carry over. For a parameter, `operands` must be empty.
  static InstructionPtr CreateClone(const Instruction& original, std::span<Instruction* const> operands,
                                    std::string_view name);

  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  // Stored beside the instruction (in its arena when it has one): a view
  // that stays valid until the name is changed or the instruction dies.
  std::string_view name() const { return name_; }
  Computation* parent() const { return parent_; }

  std::span<Instruction* const> operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  // Distinct instructions that use this one as an operand, in the order
  // they were added.
  std::span<Instruction* const> users() const { return users_; }

  std::span<const Attribute> attributes() const { return attributes_; }
  const Attribute* FindAttribute(std::string_view name) const;
  // The kText/kRaw value of an attribute, or nullptr when absent.
  const std::pmr::string* AttributeText(std::string_view name) const;
  // Adds an attribute; computation references also extend
  // called_computations(), instruction references control_predecessors().
  void AddAttribute(Attribute attribute);

  // Every computation this instruction calls, in attribute order.
  std::span<Computation* const> called_computations() const { return called_; }
  std::span<Instruction* const> control_predecessors() const { return control_preds_; }

  // parameter(N): N; -1 for other opcodes.
  int64_t parameter_number() const { return parameter_number_; }
  // constant: the value; nullptr for other opcodes.
  const Literal* literal() const { return literal_; }

  // For async ops written as `op-start`/`op-update`/`op-done` around another
  // opcode ("negate-start"), the wrapped opcode's name; empty otherwise.
  std::string_view async_wrapped_opcode() const { return async_wrapped_; }
  void set_async_wrapped_opcode(std::string_view name) { async_wrapped_.assign(name); }

  // The opcode as printed ("add", "negate-start").
  std::string OpcodeText() const;

  // Whether this instruction sits in its module's arena (parsed) rather
  // than on the heap (made by a pass).
  bool in_arena() const { return in_arena_; }

  // Position in the parent computation's instruction list (dense, from 0);
  // lets analyses keep per-instruction state in vectors.
  int64_t index_in_parent() const { return index_in_parent_; }

  // 1-based source line this instruction was parsed from; 0 if synthesized.
  int source_line() const { return source_line_; }
  void set_source_line(int line) { source_line_ = line; }

  void set_name(std::string_view name) { name_.assign(name); }
  void set_shape(Shape shape);

  // Mutation for passes. Replaces operand `index` with `new_operand`, which
  // must belong to the same computation; users() of the old and new operand
  // stay consistent. Fails, changing nothing, on a bad index or operand.
  Status ReplaceOperandWith(int64_t index, Instruction* new_operand);
  // Sets a kText attribute (canonical text), replacing one of that name or
  // appending it.
  void SetTextAttribute(std::string_view name, std::string_view value);

 private:
  friend class Computation;
  friend struct InstructionDeleter;
  // `lists` backs the operand, user, attribute, callee and control lists.
  Instruction(Opcode opcode, std::pmr::memory_resource* lists)
      : opcode_(opcode),
        name_(lists),
        operands_(lists),
        users_(lists),
        attributes_(lists),
        called_(lists),
        control_preds_(lists),
        async_wrapped_(lists) {}
  ~Instruction();
  static InstructionPtr Make(Opcode opcode, Shape shape, IrArena* arena);
  // The arena an arena instruction lives in.
  IrArena& arena() const;

  Opcode opcode_;
  bool in_arena_ = false;
  // Owned by a heap instruction; borrowed from what its arena keeps by an
  // arena instruction (ir_arena.h).
  Shape shape_;
  const Literal* literal_ = nullptr;
  std::pmr::string name_;
  Computation* parent_ = nullptr;
  std::pmr::vector<Instruction*> operands_;
  std::pmr::vector<Instruction*> users_;
  std::pmr::vector<Attribute> attributes_;
  std::pmr::vector<Computation*> called_;
  std::pmr::vector<Instruction*> control_preds_;
  int64_t parameter_number_ = -1;
  std::pmr::string async_wrapped_;
  int source_line_ = 0;
  int64_t index_in_parent_ = -1;
};

}  // namespace kiln::hlo
