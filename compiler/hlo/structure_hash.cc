#include "compiler/hlo/structure_hash.h"

#include <xxhash.h>

#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::hlo {
namespace {

class StructureHasher {
 public:
  Hash128 Computation(const hlo::Computation* computation) {
    if (computation == nullptr || computation->root() == nullptr) return {};
    if (auto it = computations_.find(computation); it != computations_.end()) return it->second;
    // Marked before the walk: a call cycle (which the verifier refuses)
    // ends here instead of looping.
    computations_[computation] = Hash128{};
    const Hash128 hash = Instruction(computation->root());
    computations_[computation] = hash;
    return hash;
  }

 private:
  // Post-order over operands and callees with an explicit stack.
  Hash128 Instruction(const hlo::Instruction* root) {
    std::vector<std::pair<const hlo::Instruction*, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [instr, expanded] = stack.back();
      stack.pop_back();
      if (instructions_.contains(instr)) continue;
      if (!expanded) {
        stack.push_back({instr, true});
        for (const hlo::Instruction* operand : instr->operands()) {
          if (!instructions_.contains(operand)) stack.push_back({operand, false});
        }
        continue;
      }
      std::vector<uint64_t> words = {static_cast<uint64_t>(instr->opcode()),
                                     static_cast<uint64_t>(instr->parameter_number()), instr->operands().size()};
      for (const hlo::Instruction* operand : instr->operands()) {
        const Hash128& h = instructions_.at(operand);
        words.push_back(h.high);
        words.push_back(h.low);
      }
      for (const hlo::Computation* callee : instr->called_computations()) {
        const Hash128 h = Computation(callee);
        words.push_back(h.high);
        words.push_back(h.low);
      }
      const XXH128_hash_t h = XXH3_128bits(words.data(), words.size() * sizeof(uint64_t));
      instructions_[instr] = Hash128{h.high64, h.low64};
    }
    return instructions_.at(root);
  }

  std::unordered_map<const hlo::Computation*, Hash128> computations_;
  std::unordered_map<const hlo::Instruction*, Hash128> instructions_;
};

}  // namespace

Hash128 StructureHash(const Module& module) { return StructureHasher().Computation(module.entry()); }

}  // namespace kiln::hlo
