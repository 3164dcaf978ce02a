#include "compiler/passes/layout_groups.h"

#include <algorithm>

#include "compiler/hlo/opcode.h"

namespace kiln::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Array ops whose kernel writes its result in any layout it is given.
bool ComputesAnArray(Opcode op) {
  if (hlo::IsElementwise(op)) return true;
  switch (op) {
    case Opcode::kConvolution:
    case Opcode::kDot:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kPad:
    case Opcode::kTranspose:
    case Opcode::kCopy:
    case Opcode::kReshape:
    case Opcode::kConcatenate:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool ReadsAnyLayout(Opcode op) { return op == Opcode::kReduce || ComputesAnArray(op); }

bool IsLaidOutArray(const hlo::Shape& shape) {
  return shape.IsArray() && shape.is_static() && shape.rank() >= 2;
}

LayoutGroups::LayoutGroups(const hlo::Computation& computation) : computation_(computation) {
  for (const auto& instr : computation.instructions()) {
    // A copy is where a layout changes: it joins nothing.
    if (!hlo::IsElementwise(instr->opcode()) || instr->opcode() == Opcode::kCopy || !IsLaidOutArray(instr->shape())) {
      continue;
    }
    for (const Instruction* operand : instr->operands()) {
      if (!operand->shape().IsArray() || operand->shape().dimensions() != instr->shape().dimensions()) continue;
      const Instruction* a = Find(instr.get());
      const Instruction* b = Find(operand);
      if (a == b) continue;
      // Union by size keeps the trees shallow (a chain of 300k adds).
      int64_t& size_a = size_[a];
      int64_t& size_b = size_[b];
      if (size_a == 0) size_a = 1;
      if (size_b == 0) size_b = 1;
      if (size_a < size_b) std::swap(a, b);
      parent_[b] = a;
      size_[a] = size_a + size_b;
    }
  }
}

const Instruction* LayoutGroups::Find(const Instruction* value) {
  // Iterative: a group may hold hundreds of thousands of values.
  const Instruction* root = value;
  for (auto it = parent_.find(root); it != parent_.end() && it->second != root; it = parent_.find(root)) {
    root = it->second;
  }
  while (value != root) {  // path compression
    auto it = parent_.find(value);
    const Instruction* next = it->second;
    it->second = root;
    value = next;
  }
  return root;
}

std::vector<std::vector<Instruction*>> LayoutGroups::Members() {
  std::unordered_map<const Instruction*, size_t> index;
  std::vector<std::vector<Instruction*>> groups;
  for (const auto& instr : computation_.instructions()) {
    if (!IsLaidOutArray(instr->shape())) continue;
    auto [it, added] = index.try_emplace(Find(instr.get()), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(instr.get());
  }
  return groups;
}

bool LayoutPinned(const Instruction& value, const hlo::Computation& computation) {
  if (!IsLaidOutArray(value.shape())) return true;
  if (&value == computation.root() || !ComputesAnArray(value.opcode())) return true;
  return !std::all_of(value.users().begin(), value.users().end(),
                      [](const Instruction* user) { return ReadsAnyLayout(user->opcode()); });
}

bool LayoutAssignable(const Instruction& value, const hlo::Computation& computation) {
  return !LayoutPinned(value, computation) && value.shape().has_default_layout();
}

}  // namespace kiln::passes
