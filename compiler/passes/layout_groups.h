// Layout groups: the values of one computation that should share a memory
// layout, so that no kernel transposes between its operands and results.
// Elementwise ops join their result with each operand of the same
// dimensions (element types may differ), except a copy, which is where a
// layout changes; the groups are the connected values. Layout assignment (layout_assignment.h, convolution_layout.h)
// chooses one layout per group and gives it to the members it may change.
//
// Borrows the computation, which must outlive the groups and not change
// while they are used. Not thread-safe.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::passes {

class LayoutGroups {
 public:
  explicit LayoutGroups(const hlo::Computation& computation);

  // The representative of the group `value` belongs to (itself when alone).
  const hlo::Instruction* Find(const hlo::Instruction* value);

  // Each group of more than one value or of one array value, its members
  // in program order; groups ordered by their first member.
  std::vector<std::vector<hlo::Instruction*>> Members();

 private:
  const hlo::Computation& computation_;
  std::unordered_map<const hlo::Instruction*, const hlo::Instruction*> parent_;
  std::unordered_map<const hlo::Instruction*, int64_t> size_;  // of each root's group
};

// Whether a user with opcode `op` reads an operand in whatever layout it
// has: plain array computations (elementwise, dot, convolution, broadcast,
// copy, reshape, slices...) and reductions, not a bitcast, tuple, loop,
// call, custom call or collective.
bool ReadsAnyLayout(hlo::Opcode op);

// Whether `shape` is an array whose layout is a choice: static, rank 2 or
// more.
bool IsLaidOutArray(const hlo::Shape& shape);

// Whether the layout of `value` is fixed by what makes or reads it: not an
// array of rank 2 or more with static dimensions, a parameter, the root,
// an op that is not a plain array computation (constants, loops, calls,
// custom calls, collectives, get-tuple-element, bitcasts), or a user that
// reads memory order or passes the value on (bitcast, tuple, loop, call,
// custom call, collective).
bool LayoutPinned(const hlo::Instruction& value, const hlo::Computation& computation);

// Whether `value` may take another layout: not pinned, and no layout was
// written for it in the text.
bool LayoutAssignable(const hlo::Instruction& value, const hlo::Computation& computation);

}  // namespace kiln::passes
