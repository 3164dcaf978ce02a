#include "compiler/hlo/module_diff.h"

#include <unordered_map>

#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

// What the fingerprint sees of an instruction, printed.
std::string Printed(const Instruction& instruction) {
  std::string text = PrintInstruction(instruction, {.control_predecessors = true, .informational_attributes = false});
  const size_t start = text.find_first_not_of(' ');
  const size_t end = text.find_last_not_of(" \n");
  return start == std::string::npos ? std::string() : text.substr(start, end - start + 1);
}

std::string Cut(std::string text, size_t max_text) {
  if (text.size() <= max_text) return text;
  text.resize(max_text);
  return text + "...";
}

// Pairs items of `current` with items of `cached`: by name first, then the
// unpaired ones in order when `compatible` allows. Returns, per current
// item, its partner's index in `cached` or -1; `cached_paired` marks them.
template <typename T, typename Compatible>
std::vector<int> Pair(const std::vector<T*>& cached, const std::vector<T*>& current, Compatible compatible,
                      std::vector<bool>& cached_paired) {
  std::unordered_map<std::string_view, int> cached_by_name;
  for (size_t i = 0; i < cached.size(); ++i) cached_by_name.emplace(cached[i]->name(), static_cast<int>(i));
  std::vector<int> partner(current.size(), -1);
  cached_paired.assign(cached.size(), false);
  for (size_t i = 0; i < current.size(); ++i) {
    auto it = cached_by_name.find(current[i]->name());
    if (it == cached_by_name.end() || cached_paired[it->second]) continue;
    partner[i] = it->second;
    cached_paired[it->second] = true;
  }
  size_t next = 0;
  for (size_t i = 0; i < current.size(); ++i) {
    if (partner[i] >= 0) continue;
    while (next < cached.size() && cached_paired[next]) ++next;
    if (next == cached.size()) break;
    if (!compatible(*cached[next], *current[i])) continue;
    partner[i] = static_cast<int>(next);
    cached_paired[next] = true;
  }
  return partner;
}

template <typename T, typename Deleter>
std::vector<T*> Raw(const std::vector<std::unique_ptr<T, Deleter>>& owned) {
  std::vector<T*> out;
  out.reserve(owned.size());
  for (const auto& item : owned) out.push_back(item.get());
  return out;
}

class Differ {
 public:
  Differ(size_t max_changes, size_t max_text) : max_changes_(max_changes), max_text_(max_text) {}

  void Computations(const Computation& cached, const Computation& current) {
    const std::vector<Instruction*> old_instructions = Raw(cached.instructions());
    const std::vector<Instruction*> new_instructions = Raw(current.instructions());
    std::vector<bool> old_paired;
    const std::vector<int> partner = Pair(
        old_instructions, new_instructions,
        [](const Instruction& a, const Instruction& b) { return a.opcode() == b.opcode(); }, old_paired);
    for (size_t i = 0; i < new_instructions.size(); ++i) {
      const Instruction& now = *new_instructions[i];
      if (partner[i] < 0) {
        Add({.kind = InstructionChange::Kind::kAdded,
             .computation = current.name(),
             .instruction = std::string(now.name()),
             .line = now.source_line(),
             .current = Printed(now)});
        continue;
      }
      const Instruction& before = *old_instructions[partner[i]];
      std::string now_text = Printed(now);
      std::string before_text = Printed(before);
      if (now_text == before_text) continue;
      const bool value_only = now.opcode() == Opcode::kConstant && before.opcode() == Opcode::kConstant &&
                              now.shape() == before.shape();
      Add({.kind = InstructionChange::Kind::kChanged,
           .computation = current.name(),
           .instruction = std::string(now.name()),
           .line = now.source_line(),
           .cached_line = before.source_line(),
           .current = std::move(now_text),
           .cached = std::move(before_text),
           .value_only = value_only});
    }
    for (size_t j = 0; j < old_instructions.size(); ++j) {
      if (old_paired[j]) continue;
      const Instruction& gone = *old_instructions[j];
      Add({.kind = InstructionChange::Kind::kRemoved,
           .computation = cached.name(),
           .instruction = std::string(gone.name()),
           .cached_line = gone.source_line(),
           .cached = Printed(gone)});
    }
  }

  void Add(InstructionChange change) {
    ++diff_.total_changes;
    if (diff_.changes.size() >= max_changes_) return;
    change.current = Cut(std::move(change.current), max_text_);
    change.cached = Cut(std::move(change.cached), max_text_);
    diff_.changes.push_back(std::move(change));
  }

  ModuleDiff Take() { return std::move(diff_); }

 private:
  size_t max_changes_;
  size_t max_text_;
  ModuleDiff diff_;
};

}  // namespace

ModuleDiff DiffModules(const Module& cached, const Module& current, size_t max_changes, size_t max_text) {
  Differ differ(max_changes, max_text);
  const std::vector<Computation*> old_computations = Raw(cached.computations());
  const std::vector<Computation*> new_computations = Raw(current.computations());
  std::vector<bool> old_paired;
  const std::vector<int> partner = Pair(
      old_computations, new_computations,
      [](const Computation& a, const Computation& b) { return a.is_entry() == b.is_entry(); }, old_paired);
  // The entries pair whatever their names.
  std::vector<int> pairs = partner;
  for (size_t i = 0; i < new_computations.size(); ++i) {
    if (!new_computations[i]->is_entry() || pairs[i] >= 0) continue;
    for (size_t j = 0; j < old_computations.size(); ++j) {
      if (old_computations[j]->is_entry() && !old_paired[j]) {
        pairs[i] = static_cast<int>(j);
        old_paired[j] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < new_computations.size(); ++i) {
    const Computation& now = *new_computations[i];
    if (pairs[i] >= 0) {
      differ.Computations(*old_computations[pairs[i]], now);
      continue;
    }
    for (const auto& instruction : now.instructions()) {
      differ.Add({.kind = InstructionChange::Kind::kAdded,
                  .computation = now.name(),
                  .instruction = std::string(instruction->name()),
                  .line = instruction->source_line(),
                  .current = Printed(*instruction)});
    }
  }
  for (size_t j = 0; j < old_computations.size(); ++j) {
    if (old_paired[j]) continue;
    for (const auto& instruction : old_computations[j]->instructions()) {
      differ.Add({.kind = InstructionChange::Kind::kRemoved,
                  .computation = old_computations[j]->name(),
                  .instruction = std::string(instruction->name()),
                  .cached_line = instruction->source_line(),
                  .cached = Printed(*instruction)});
    }
  }
  return differ.Take();
}

std::string ConstantValueText(const std::string& printed) {
  constexpr std::string_view kOpen = "constant(";
  const size_t at = printed.find(kOpen);
  const size_t close = printed.rfind(')');
  if (at == std::string::npos || close == std::string::npos || close < at + kOpen.size()) return printed;
  return printed.substr(at + kOpen.size(), close - at - kOpen.size());
}

std::string_view InstructionChangeKindName(InstructionChange::Kind kind) {
  switch (kind) {
    case InstructionChange::Kind::kChanged: return "changed";
    case InstructionChange::Kind::kAdded: return "added";
    case InstructionChange::Kind::kRemoved: return "removed";
  }
  return "changed";
}

}  // namespace kiln::hlo
