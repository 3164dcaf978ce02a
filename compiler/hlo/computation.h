// A computation: a DAG of instructions with parameters and one root.
//
// Owns its instructions (in insertion order, which for parsed text is the
// textual order: operands before users). A Module owns its computations.
// Not thread-safe for mutation; concurrent reads are fine.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }

  // Takes ownership; records the instruction as a user of its operands.
  // Parameters are also indexed by their number.
  Instruction* AddInstruction(InstructionPtr instruction);

  // Mutation for passes. Makes every user of `old` (and the root, if it is
  // `old`) use `replacement`, an instruction of this computation, instead.
  // Control edges are not moved. Fails, changing nothing, on a foreign
  // instruction.
  Status ReplaceAllUsesWith(Instruction* old, Instruction* replacement);
  // Deletes `dead` instructions, which must belong here and have no users
  // outside `dead`, not be the root or a parameter, and not be a control
  // predecessor of an instruction that stays. Re-numbers index_in_parent()
  // densely in the old order. Fails, changing nothing, otherwise.
  Status RemoveInstructions(std::span<Instruction* const> dead);
  // Reorders the instruction list to `order`, which must hold each
  // instruction of this computation exactly once (the caller keeps operands
  // before users); re-numbers index_in_parent(). Fails, changing nothing,
  // otherwise.
  Status SetInstructionOrder(std::span<Instruction* const> order);

  const std::vector<InstructionPtr>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // Parameters by number; a slot is nullptr when that number is missing
  // (the verifier reports it).
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }

  // `execution_thread="..."` written after the body; empty when absent.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  bool is_entry() const { return is_entry_; }

 private:
  friend class Module;
  std::string name_;
  Module* parent_ = nullptr;
  bool is_entry_ = false;
  std::vector<InstructionPtr> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  std::string execution_thread_;
};

}  // namespace kiln::hlo
