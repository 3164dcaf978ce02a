#include "runtime/timing/prologue_sources.h"

#include <vector>

#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

bool IsContraction(const hlo::Instruction& instr) {
  return instr.opcode() == hlo::Opcode::kDot || instr.opcode() == hlo::Opcode::kConvolution;
}

}  // namespace

std::unordered_map<const hlo::Instruction*, int64_t> PrologueSources(const hlo::Computation& fused) {
  const auto& instrs = fused.instructions();
  const size_t n = instrs.size();
  // Users come after their operands: one backward pass decides membership.
  std::vector<char> in_prologue(n, 0);
  for (size_t i = n; i-- > 0;) {
    const hlo::Instruction& instr = *instrs[i];
    if (IsContraction(instr) || instr.opcode() == hlo::Opcode::kParameter || &instr == fused.root() ||
        instr.users().empty()) {
      continue;
    }
    bool feeds_only_operands = true;
    for (const hlo::Instruction* user : instr.users()) {
      const bool user_in = user->parent() == &fused && (IsContraction(*user) || in_prologue[user->index_in_parent()]);
      if (!user_in) {
        feeds_only_operands = false;
        break;
      }
    }
    in_prologue[i] = feeds_only_operands;
  }
  // Sources, operands first: the largest parameter read through the chain.
  std::vector<std::pair<double, int64_t>> source(n, {-1.0, -1});
  std::unordered_map<const hlo::Instruction*, int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (!in_prologue[i]) continue;
    const hlo::Instruction& instr = *instrs[i];
    std::pair<double, int64_t> best{-1.0, -1};
    for (const hlo::Instruction* operand : instr.operands()) {
      std::pair<double, int64_t> candidate{-1.0, -1};
      if (operand->parent() != &fused) continue;
      if (operand->opcode() == hlo::Opcode::kParameter) {
        candidate = {PaddedArrayBytes(operand->shape()), operand->parameter_number()};
      } else if (in_prologue[operand->index_in_parent()]) {
        candidate = source[operand->index_in_parent()];
      }
      if (candidate.first > best.first) best = candidate;
    }
    source[i] = best;
    out.emplace(&instr, best.second);
  }
  return out;
}

}  // namespace kiln::runtime::timing
