// Attributes of instructions and modules (`dimensions={1,0}`,
// `to_apply=%add`, `metadata={...}`), kept generically so that every
// attribute XLA prints survives a parse/print round trip, with typed
// decoders for the ones the compiler reads.
//
// An attribute value is one of:
//  - kText: canonical token text of the value, spacing normalised (one space
//    only between two word-like tokens, none elsewhere), so that equal
//    values compare and hash equal however they were spaced;
//  - kRaw: text kept verbatim (metadata, backend_config, frontend_attributes,
//    statistics: free-form or JSON);
//  - kComputations / kInstructions: references resolved to IR pointers
//    (to_apply, calls, branch_computations, control-predecessors, ...).
// Plain value; copyable; thread-compatible.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::hlo {

class Computation;
class Instruction;

struct Attribute {
  enum class Kind : uint8_t { kText, kRaw, kComputations, kInstructions };
  // Allocator-aware: in an instruction's attribute list every string and
  // list of the attribute lives where the list does (the module's arena for
  // a parsed instruction). A copy made without an allocator goes to the
  // heap, so an attribute copied out of a module outlives it.
  using allocator_type = std::pmr::polymorphic_allocator<>;

  std::pmr::string name;
  Kind kind = Kind::kText;
  std::pmr::string value;                       // kText, kRaw
  std::pmr::vector<Computation*> computations;  // kComputations
  std::pmr::vector<Instruction*> instructions;  // kInstructions
  bool braced = false;  // references were written as {a, b} rather than a

  Attribute() = default;
  explicit Attribute(const allocator_type& alloc)
      : name(alloc), value(alloc), computations(alloc), instructions(alloc) {}
  Attribute(const Attribute& other, const allocator_type& alloc)
      : name(other.name, alloc),
        kind(other.kind),
        value(other.value, alloc),
        computations(other.computations, alloc),
        instructions(other.instructions, alloc),
        braced(other.braced) {}
  Attribute(Attribute&& other, const allocator_type& alloc)
      : name(std::move(other.name), alloc),
        kind(other.kind),
        value(std::move(other.value), alloc),
        computations(std::move(other.computations), alloc),
        instructions(std::move(other.instructions), alloc),
        braced(other.braced) {}
  Attribute(const Attribute&) = default;
  Attribute(Attribute&&) = default;
  Attribute& operator=(const Attribute&) = default;
  Attribute& operator=(Attribute&&) = default;

  // `name=value` with canonical text.
  static Attribute Text(std::string_view name, std::string_view value);
  // `name=%callee` (one computation, unbraced).
  static Attribute Calls(std::string_view name, Computation* callee);
};

// True for attributes that hold computation references.
bool IsComputationAttribute(std::string_view name);
// True for attributes kept verbatim.
bool IsRawAttribute(std::string_view name);
// True for attributes that never change the compiled program (metadata,
// statistics, ...); the fingerprint skips them.
bool IsNonSemanticAttribute(std::string_view name);

// Typed decoders over kText values. Each fails with a message naming what
// was expected.
Result<int64_t> DecodeInt(std::string_view text);
Result<bool> DecodeBool(std::string_view text);
Result<std::vector<int64_t>> DecodeIntList(std::string_view text);  // {1,2}
Result<std::vector<std::vector<int64_t>>> DecodeIntListList(std::string_view text);
Result<std::string> DecodeString(std::string_view text);  // "..." unescaped

}  // namespace kiln::hlo
