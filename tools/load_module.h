// Reads a module file (HLO text, StableHLO text or MLIR bytecode, told apart
// by content: compiler/stablehlo/frontend.h), parses and verifies it. Errors
// name the file and, for parse errors, the line and column. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::tools {

Result<std::string> ReadFile(const std::string& path);
Result<std::unique_ptr<hlo::Module>> LoadVerifiedModule(const std::string& path);
// The same for text already read from `path`.
Result<std::unique_ptr<hlo::Module>> ParseVerifiedModule(const std::string& text,
                                                         const std::string& path);

}  // namespace kiln::tools
