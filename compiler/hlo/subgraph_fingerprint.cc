#include "compiler/hlo/subgraph_fingerprint.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/hlo/fingerprinter.h"

namespace kiln::hlo {
namespace {

using fingerprint_internal::Fingerprinter;
using fingerprint_internal::HashWriter;

// A value the subgraph reads from outside, and where it reads it.
struct Input {
  Hash128 shape;
  std::vector<std::pair<Hash128, uint64_t>> uses;  // (user's content hash, operand position)
  Hash128 label;
};

// Where an operand of a subgraph instruction comes from: a position in the
// subgraph, or an input.
struct OperandSource {
  bool inside;
  size_t index;
};

std::string IndexError(int64_t index, const Computation& computation, const char* why) {
  return "subgraph fingerprint: instruction index " + std::to_string(index) + " of %" + computation.name() + " " +
         why;
}

// The members in index order (operands before users), checked.
Result<std::vector<const Instruction*>> Members(const Computation& computation,
                                                std::span<const int64_t> instructions) {
  if (instructions.empty()) {
    return InvalidArgumentError("subgraph fingerprint: the subgraph of %" + computation.name() + " is empty");
  }
  std::vector<int64_t> sorted(instructions.begin(), instructions.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<const Instruction*> members;
  members.reserve(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= computation.instruction_count()) {
      return InvalidArgumentError(IndexError(sorted[i], computation, "is out of range"));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return InvalidArgumentError(IndexError(sorted[i], computation, "is listed twice"));
    }
    members.push_back(computation.instructions()[sorted[i]].get());
  }
  return members;
}

}  // namespace

Result<Hash128> FingerprintSubgraph(const Computation& computation, std::span<const int64_t> instructions,
                                    std::span<const int64_t> roots) {
  KILN_ASSIGN_OR_RETURN(std::vector<const Instruction*> members, Members(computation, instructions));
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t k = 0; k < members.size(); ++k) position.emplace(members[k], k);

  Fingerprinter fp;
  std::unordered_map<const Instruction*, size_t> input_of;
  std::vector<Input> inputs;
  std::vector<std::vector<OperandSource>> sources(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const Instruction& instr = *members[k];
    KILN_RETURN_IF_ERROR(fp.HashCallees(instr));
    for (const Instruction* op : instr.operands()) {
      if (auto it = position.find(op); it != position.end()) {
        if (it->second >= k) {
          return InvalidArgumentError("subgraph fingerprint: instruction %" + std::string(instr.name()) +
                                      " uses an operand that is not defined before it");
        }
        sources[k].push_back({true, it->second});
        continue;
      }
      auto [it, added] = input_of.emplace(op, inputs.size());
      if (added) inputs.push_back({.shape = fp.ShapeHash(op->shape()), .uses = {}, .label = {}});
      sources[k].push_back({false, it->second});
    }
  }

  // Content: each instruction with inside operands by their content and
  // inputs by their shapes.
  std::vector<Hash128> content(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const std::vector<OperandSource>& from = sources[k];
    content[k] = fp.InstructionHash('U', *members[k], [&](size_t i) {
      return from[i].inside ? content[from[i].index] : inputs[from[i].index].shape;
    });
    for (size_t i = 0; i < from.size(); ++i) {
      if (!from[i].inside) inputs[from[i].index].uses.emplace_back(content[k], i);
    }
  }

  // Inputs told apart by their uses, then the structure with those labels.
  HashWriter w;
  for (Input& input : inputs) {
    std::sort(input.uses.begin(), input.uses.end());
    w.Clear();
    w.Tag('X');
    w.Hash(input.shape);
    w.U64(input.uses.size());
    for (const auto& [user, operand] : input.uses) {
      w.Hash(user);
      w.U64(operand);
    }
    input.label = w.Finish();
  }
  std::vector<Hash128> structure(members.size());
  std::vector<bool> used_inside(members.size(), false);
  for (size_t k = 0; k < members.size(); ++k) {
    w.Clear();
    w.Tag('V');
    w.Hash(content[k]);
    for (const OperandSource& from : sources[k]) {
      if (from.inside) used_inside[from.index] = true;
      w.Hash(from.inside ? structure[from.index] : inputs[from.index].label);
    }
    structure[k] = w.Finish();
  }

  // The subgraph: its roots, its other values nobody inside uses, and its
  // inputs, each as a sorted set.
  std::vector<bool> is_root(members.size(), false);
  for (int64_t r : roots) {
    const bool in_range = r >= 0 && r < computation.instruction_count();
    auto it = in_range ? position.find(computation.instructions()[r].get()) : position.end();
    if (it == position.end()) {
      return InvalidArgumentError(IndexError(r, computation, "is a root but not in the subgraph"));
    }
    if (is_root[it->second]) return InvalidArgumentError(IndexError(r, computation, "is a root listed twice"));
    is_root[it->second] = true;
  }
  std::vector<Hash128> root_hashes;
  std::vector<Hash128> sink_hashes;
  for (size_t k = 0; k < members.size(); ++k) {
    if (is_root[k]) {
      root_hashes.push_back(structure[k]);
    } else if (!used_inside[k]) {
      sink_hashes.push_back(structure[k]);
    }
  }
  std::vector<Hash128> input_labels;
  for (const Input& input : inputs) input_labels.push_back(input.label);
  w.Clear();
  w.Tag('F');
  for (std::vector<Hash128>* set : {&root_hashes, &sink_hashes, &input_labels}) {
    std::sort(set->begin(), set->end());
    w.U64(set->size());
    for (const Hash128& h : *set) w.Hash(h);
  }
  return w.Finish();
}

}  // namespace kiln::hlo
