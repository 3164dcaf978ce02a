// Which instructions differ between two versions of a module: the cached
// one an entry was compiled from and the one a trainer sends now. Used to
// explain a cache miss at the level a person can act on ("constant %lr at
// line 12 is 0.0005 here, 0.001 in the cached module").
//
// Computations are paired by name (the entry with the entry), then the
// leftovers in order; instructions by name, then leftovers of the same
// opcode in order. Two paired instructions differ when their printed forms
// differ without the informational attributes the fingerprint ignores
// (metadata, frontend attributes). Pure; thread-safe (reads both modules).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compiler/hlo/module.h"

namespace kiln::hlo {

struct InstructionChange {
  enum class Kind { kChanged, kAdded, kRemoved };
  Kind kind = Kind::kChanged;
  std::string computation;  // as named in the current module (the cached one when removed)
  std::string instruction;  // the same
  int line = 0;             // in the current module's text; 0 when removed or unknown
  int cached_line = 0;      // in the cached module's text; 0 when added or unknown
  std::string current;      // printed instruction ("%lr = f32[] constant(0.0005)"); empty when removed
  std::string cached;       // the same in the cached module; empty when added
  // Both are constants of one shape that differ only in their values.
  bool value_only = false;
};

struct ModuleDiff {
  std::vector<InstructionChange> changes;  // the first max_changes, in the current module's order
  size_t total_changes = 0;                // all of them
};

// Printed forms longer than `max_text` bytes are cut with "...".
ModuleDiff DiffModules(const Module& cached, const Module& current, size_t max_changes = 10,
                       size_t max_text = 160);

// The value of a printed constant, "0.002" of "%lr = f32[] constant(0.002)";
// `printed` itself when it is not a constant.
std::string ConstantValueText(const std::string& printed);

std::string_view InstructionChangeKindName(InstructionChange::Kind kind);  // "changed", "added", "removed"

}  // namespace kiln::hlo
