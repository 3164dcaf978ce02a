// An HLO module: computations (callees before callers), one entry, and the
// module-level configuration written in the `HloModule` header.
//
// Owns its computations and the arena its parsed instructions live in
// (arena(); instructions that passes add are on the heap). Not thread-safe
// for mutation; concurrent reads are fine.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/ir_arena.h"

namespace kiln::hlo {

// entry_computation_layout={(p0, p1, ...)->result}
struct ComputationLayout {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ComputationLayout&) const = default;
};

class Module {
 public:
  explicit Module(std::string name) : arena_(std::make_unique<IrArena>()), name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // The computations go first, before the arena they may live in; their
  // arena instructions are dropped unread (ir_arena.h).
  ~Module();

  const std::string& name() const { return name_; }

  // Takes ownership. The first computation added with is_entry (or, if none
  // is, the last one added; see set_entry) is the entry.
  Computation* AddComputation(std::unique_ptr<Computation> computation, bool is_entry);
  // Adds a computation right before `before` in the module order (which
  // prints callees before callers), or last when `before` is not here.
  Computation* InsertComputation(std::unique_ptr<Computation> computation, const Computation* before);
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  Computation* FindComputation(std::string_view name) const;

  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry);

  // Header attributes other than entry_computation_layout, in text order.
  const std::vector<Attribute>& attributes() const { return attributes_; }
  void AddAttribute(Attribute a) { attributes_.push_back(std::move(a)); }
  const Attribute* FindAttribute(std::string_view name) const;

  const std::optional<ComputationLayout>& entry_layout() const { return entry_layout_; }
  void set_entry_layout(ComputationLayout layout) { entry_layout_ = std::move(layout); }

  int64_t instruction_count() const;

  // Where instructions of this module may be placed (Instruction::Create's
  // `arena`). Stable for the module's lifetime.
  IrArena* arena() const { return arena_.get(); }

 private:
  // First member, so destroyed last.
  std::unique_ptr<IrArena> arena_;
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  std::vector<Attribute> attributes_;
  std::optional<ComputationLayout> entry_layout_;
};

}  // namespace kiln::hlo
