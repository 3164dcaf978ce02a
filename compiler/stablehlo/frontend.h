// One entry point for every reader of modules (the kiln command, the
// server, the tuner): the bytes of an HLO text module, a StableHLO module in
// MLIR text, or MLIR bytecode (a VHLO portable artifact, as
// `stablehlo-translate --serialize` and jax.export write it), told apart by
// content, not by name, and parsed into kiln's HLO IR. The result is not
// verified (hlo::VerifyModule does that), as hlo::ParseModule's is not.
//
// Errors name `name` and, for text, the line and column. Never crashes on
// malformed input. Thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "compiler/stablehlo/convert.h"

namespace kiln::stablehlo {

enum class ModuleFormat {
  kHloText,       // anything that is neither of the others
  kMlirText,      // first token `module`, `func.func`, ... (text_parser.h)
  kMlirBytecode,  // starts with the magic "ML\xefR"
};

ModuleFormat DetectModuleFormat(std::string_view bytes);
std::string_view ModuleFormatName(ModuleFormat format);  // "HLO text", "StableHLO text", "MLIR bytecode"

// Parses `bytes` in the format they are in. When `options` gives argument
// shapes or values, the module's dynamic shapes are refined from them
// (shape_refinement.h), whatever its format; its filename is replaced by
// `name`.
Result<std::unique_ptr<hlo::Module>> ParseAnyModule(std::string_view bytes, std::string_view name,
                                                    const ConvertOptions& options = {});

}  // namespace kiln::stablehlo
