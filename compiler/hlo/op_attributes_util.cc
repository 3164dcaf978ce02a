#include "compiler/hlo/op_attributes_util.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::hlo::op_attributes_internal {

Error AttrError(const Instruction& instr, std::string_view name, std::string_view message) {
  return InvalidArgumentError("attribute " + std::string(name) + ": " + std::string(message))
      .At({.subject = "instruction %" + std::string(instr.name())});
}

Result<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    return InvalidArgumentError("expected an integer, got '" + std::string(s) + "'");
  }
  return v;
}

Result<const std::pmr::string*> RequiredText(const Instruction& instr, std::string_view name) {
  const Attribute* a = instr.FindAttribute(name);
  if (a == nullptr) return AttrError(instr, name, "missing");
  if (a->kind != Attribute::Kind::kText && a->kind != Attribute::Kind::kRaw) {
    return AttrError(instr, name, "expected a value, got a reference");
  }
  return &a->value;
}

}  // namespace kiln::hlo::op_attributes_internal
