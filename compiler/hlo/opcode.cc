#include "compiler/hlo/opcode.h"

#include <array>
#include <string>

#include "compiler/hlo/name_table.h"

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

// Opcodes by name, for the parser's hot path (one lookup per instruction).
struct OpcodesByName {
  NameTable<const OpcodeInfo> table;
  OpcodesByName() {
    for (const OpcodeInfo& info : kOpcodes) table.Insert(info.name, &info);
  }
};

const OpcodesByName& ByName() {
  static const OpcodesByName by_name;
  return by_name;
}

}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<size_t>(op)].name; }

OpcodeCategory CategoryOf(Opcode op) { return kOpcodes[static_cast<size_t>(op)].category; }

int OpcodeCount() { return static_cast<int>(kOpcodes.size()); }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  const OpcodeInfo* info = ByName().table.Find(name);
  if (info == nullptr) return std::nullopt;
  return info->op;
}

}  // namespace kiln::hlo
