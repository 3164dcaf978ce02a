// Helpers shared by the op_attributes*.cc files, which implement
// op_attributes.h one attribute family per file. Internal to those files:
// other code uses op_attributes.h.
//
// Pure functions over immutable inputs; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo::op_attributes_internal {

// "attribute <attr>: <message>", placed at "instruction %<name>".
Error AttrError(const Instruction& instr, std::string_view name, std::string_view message);

// Wraps a decoder error with the instruction and attribute names.
template <typename T>
Result<T> Annotate(const Instruction& instr, std::string_view name, Result<T> r) {
  if (!r) return AttrError(instr, name, r.error().ToString());
  return r;
}

// A whole decimal integer; fails on anything else, including "".
Result<int64_t> ParseInt(std::string_view s);

// The text of a required value attribute. The pointer refers into `instr`,
// which must outlive its use; fails when the attribute is missing or is a
// computation reference.
Result<const std::pmr::string*> RequiredText(const Instruction& instr, std::string_view name);

// The enumerator whose name is at the same index in `names`, or nullopt.
template <typename E, size_t N>
std::optional<E> LookupEnum(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace kiln::hlo::op_attributes_internal
