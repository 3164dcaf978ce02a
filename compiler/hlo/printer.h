// HLO text printer. Its output parses back to an equal module
// (ModulesEqual). Names are printed with '%' so no name can be mistaken for
// a keyword; default layouts are omitted; attribute values are printed in
// their canonical spacing. Thread-safe (reads the module only).
#pragma once

#include <string>

#include "compiler/hlo/module.h"

namespace kiln::hlo {

std::string PrintModule(const Module& module);
std::string PrintInstruction(const Instruction& instruction);

}  // namespace kiln::hlo
