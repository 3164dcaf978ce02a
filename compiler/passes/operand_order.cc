#include "compiler/passes/operand_order.h"

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kiln::passes {
namespace {

using hlo::Instruction;

template <typename Visit>
void ForEachPredecessor(const Instruction& instr, Visit&& visit) {
  for (const Instruction* operand : instr.operands()) visit(operand);
  for (const Instruction* pred : instr.control_predecessors()) visit(pred);
}

}  // namespace

bool OperandsComeFirst(const hlo::Computation& computation) {
  for (const auto& instr : computation.instructions()) {
    bool ok = true;
    ForEachPredecessor(*instr, [&](const Instruction* p) {
      ok &= p->parent() == &computation && p->index_in_parent() < instr->index_in_parent();
    });
    if (!ok) return false;
  }
  return true;
}

Result<bool> PlaceOperandsFirst(hlo::Computation& computation) {
  if (OperandsComeFirst(computation)) return false;
  // Depth-first post-order from each instruction in list order, visiting
  // predecessors in their list order: an instruction already after its
  // predecessors stays where it was relative to the others.
  const auto& instrs = computation.instructions();
  const size_t n = instrs.size();
  enum : char { kNew, kOpen, kDone };
  std::vector<char> state(n, kNew);
  std::vector<Instruction*> order;
  order.reserve(n);
  std::vector<std::pair<Instruction*, size_t>> stack;  // (instruction, next predecessor)
  for (size_t start = 0; start < n; ++start) {
    if (state[start] != kNew) continue;
    stack.emplace_back(instrs[start].get(), 0);
    state[start] = kOpen;
    while (!stack.empty()) {
      auto& [instr, next] = stack.back();
      const std::span<Instruction* const> operands = instr->operands();
      const std::span<Instruction* const> controls = instr->control_predecessors();
      if (next < operands.size() + controls.size()) {
        Instruction* p = next < operands.size() ? operands[next] : controls[next - operands.size()];
        ++next;
        if (p->parent() != &computation) continue;  // the verifier reports it
        const size_t i = static_cast<size_t>(p->index_in_parent());
        if (state[i] == kOpen) {
          return InvalidArgumentError("computation %" + computation.name() + ": %" + std::string(p->name()) +
                                      " depends on itself through %" + std::string(instr->name()));
        }
        if (state[i] == kNew) {
          state[i] = kOpen;
          stack.emplace_back(p, 0);
        }
        continue;
      }
      state[static_cast<size_t>(instr->index_in_parent())] = kDone;
      order.push_back(instr);
      stack.pop_back();
    }
  }
  KILN_RETURN_IF_ERROR(computation.SetInstructionOrder(order));
  return true;
}

Result<bool> PlaceOperandsFirst(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool reordered, PlaceOperandsFirst(*computation));
    changed |= reordered;
  }
  return changed;
}

}  // namespace kiln::passes
