#include "compiler/hlo/opcode.h"

#include <algorithm>
#include <array>
#include <string>

namespace kiln::hlo {
namespace {

struct OpcodeInfo {
  Opcode op;
  std::string_view name;
  OpcodeCategory category;
};

constexpr std::array kOpcodes = {
#define KILN_OPCODE_INFO(e, name, category) \
  OpcodeInfo{Opcode::e, name, OpcodeCategory::category},
    KILN_OPCODES(KILN_OPCODE_INFO)
#undef KILN_OPCODE_INFO
};

// Opcode names sorted, for binary search in the parser's hot path.
struct SortedNames {
  std::array<OpcodeInfo, kOpcodes.size()> by_name = kOpcodes;
  SortedNames() {
    std::sort(by_name.begin(), by_name.end(),
              [](const OpcodeInfo& a, const OpcodeInfo& b) { return a.name < b.name; });
  }
};

const SortedNames& Sorted() {
  static const SortedNames sorted;
  return sorted;
}

}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<size_t>(op)].name; }

OpcodeCategory CategoryOf(Opcode op) { return kOpcodes[static_cast<size_t>(op)].category; }

int OpcodeCount() { return static_cast<int>(kOpcodes.size()); }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  const auto& names = Sorted().by_name;
  auto it = std::lower_bound(names.begin(), names.end(), name,
                             [](const OpcodeInfo& a, std::string_view n) { return a.name < n; });
  if (it == names.end() || it->name != name) return std::nullopt;
  return it->op;
}

}  // namespace kiln::hlo
