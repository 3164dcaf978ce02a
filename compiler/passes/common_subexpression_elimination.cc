#include "compiler/passes/common_subexpression_elimination.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/hlo/attribute.h"
#include "compiler/passes/side_effects.h"

namespace kiln::passes {
namespace {

using hlo::Attribute;
using hlo::Instruction;

size_t Mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Semantic attributes in order; metadata and the like are skipped.
std::vector<const Attribute*> SemanticAttributes(const Instruction& instr) {
  std::vector<const Attribute*> out;
  for (const Attribute& a : instr.attributes()) {
    if (!hlo::IsNonSemanticAttribute(a.name)) out.push_back(&a);
  }
  return out;
}

bool SameAttribute(const Attribute& a, const Attribute& b) {
  return a.name == b.name && a.kind == b.kind && a.value == b.value &&
         a.computations == b.computations && a.instructions == b.instructions;
}

size_t HashInstruction(const Instruction& instr) {
  size_t h = std::hash<int>()(static_cast<int>(instr.opcode()));
  h = Mix(h, std::hash<int>()(static_cast<int>(instr.shape().element_type())));
  for (int64_t d : instr.shape().dimensions()) h = Mix(h, std::hash<int64_t>()(d));
  for (const Instruction* operand : instr.operands()) {
    h = Mix(h, std::hash<const void*>()(operand));
  }
  for (const Attribute* a : SemanticAttributes(instr)) {
    h = Mix(h, std::hash<std::string_view>()(a->name));
    h = Mix(h, std::hash<std::string_view>()(a->value));
  }
  if (const hlo::Literal* literal = instr.literal()) {
    const auto& data = literal->data();
    h = Mix(h, std::hash<std::string_view>()(
                   std::string_view(reinterpret_cast<const char*>(data.data()), data.size())));
  }
  return h;
}

bool Identical(const Instruction& a, const Instruction& b) {
  if (a.opcode() != b.opcode() || a.async_wrapped_opcode() != b.async_wrapped_opcode() ||
      !(a.shape() == b.shape()) || !std::ranges::equal(a.operands(), b.operands())) {
    return false;
  }
  std::vector<const Attribute*> attrs_a = SemanticAttributes(a);
  std::vector<const Attribute*> attrs_b = SemanticAttributes(b);
  if (attrs_a.size() != attrs_b.size()) return false;
  for (size_t i = 0; i < attrs_a.size(); ++i) {
    if (!SameAttribute(*attrs_a[i], *attrs_b[i])) return false;
  }
  if ((a.literal() == nullptr) != (b.literal() == nullptr)) return false;
  return a.literal() == nullptr || *a.literal() == *b.literal();
}

}  // namespace

Result<bool> EliminateCommonSubexpressions(hlo::Computation& computation) {
  std::unordered_multimap<size_t, Instruction*> seen;
  seen.reserve(computation.instructions().size());
  // Snapshot: replacing uses does not change the instruction list.
  std::vector<Instruction*> order;
  order.reserve(computation.instructions().size());
  for (const auto& instr : computation.instructions()) order.push_back(instr.get());

  bool changed = false;
  for (Instruction* instr : order) {
    if (!IsCseCandidate(*instr)) continue;
    size_t hash = HashInstruction(*instr);
    Instruction* match = nullptr;
    auto [begin, end] = seen.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if (Identical(*it->second, *instr)) {
        match = it->second;
        break;
      }
    }
    if (match == nullptr) {
      seen.emplace(hash, instr);
      continue;
    }
    if (instr->users().empty() && computation.root() != instr) continue;
    KILN_RETURN_IF_ERROR(computation.ReplaceAllUsesWith(instr, match));
    changed = true;
  }
  return changed;
}

Result<bool> CommonSubexpressionElimination::Run(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool merged, EliminateCommonSubexpressions(*computation));
    changed |= merged;
  }
  return changed;
}

}  // namespace kiln::passes
