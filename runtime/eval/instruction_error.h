// The evaluator's errors about one instruction: "instruction %<name>: <what>".
// InstrError is for an instruction the evaluator cannot run as written (an
// ill-formed module: invalid_argument); UnsupportedOpError for a valid one
// it does not support (unimplemented). Pure; thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::runtime {

inline Error InstrError(const hlo::Instruction& instr, const std::string& what) {
  return InvalidArgumentError("instruction %" + std::string(instr.name()) + ": " + what);
}

inline Error UnsupportedOpError(const hlo::Instruction& instr, const std::string& what) {
  return UnimplementedError("instruction %" + std::string(instr.name()) + ": " + what);
}

}  // namespace kiln::runtime
