#include "compiler/passes/dead_code_elimination.h"

#include <vector>

#include "compiler/passes/side_effects.h"

namespace kiln::passes {

Result<bool> RemoveDeadCode(hlo::Computation& computation) {
  const auto& instructions = computation.instructions();
  std::vector<char> live(instructions.size(), 0);
  std::vector<hlo::Instruction*> worklist;
  auto mark = [&](hlo::Instruction* instr) {
    if (instr == nullptr || instr->parent() != &computation) return;
    char& flag = live[instr->index_in_parent()];
    if (flag) return;
    flag = 1;
    worklist.push_back(instr);
  };
  mark(computation.root());
  for (const auto& instr : instructions) {
    if (instr->opcode() == hlo::Opcode::kParameter || HasSideEffect(*instr)) mark(instr.get());
  }
  while (!worklist.empty()) {
    hlo::Instruction* instr = worklist.back();
    worklist.pop_back();
    for (hlo::Instruction* operand : instr->operands()) mark(operand);
    for (hlo::Instruction* pred : instr->control_predecessors()) mark(pred);
  }
  std::vector<hlo::Instruction*> dead;
  for (const auto& instr : instructions) {
    if (!live[instr->index_in_parent()]) dead.push_back(instr.get());
  }
  if (dead.empty()) return false;
  KILN_RETURN_IF_ERROR(computation.RemoveInstructions(dead));
  return true;
}

Result<bool> DeadCodeElimination::Run(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool removed, RemoveDeadCode(*computation));
    changed |= removed;
  }
  return changed;
}

}  // namespace kiln::passes
