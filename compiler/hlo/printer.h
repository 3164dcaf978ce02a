// HLO text printer. Its output parses back to an equal module
// (ModulesEqual). Names are printed with '%' so no name can be mistaken for
// a keyword; default layouts are omitted; attribute values are printed in
// their canonical spacing. Thread-safe (reads the module only).
#pragma once

#include <string>

#include "compiler/hlo/module.h"

namespace kiln::hlo {

struct PrintOptions {
  // Attributes that refer to other instructions (control-predecessors).
  bool control_predecessors = true;
  // metadata, frontend_attributes, statistics and the other attributes the
  // fingerprint ignores (Attribute::Kind::kRaw, except backend_config).
  bool informational_attributes = true;
};

std::string PrintModule(const Module& module);
std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options = {});
// One computation ("%name {\n ... }"), without the ENTRY keyword.
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});

}  // namespace kiln::hlo
