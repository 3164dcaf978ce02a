// Reader of MLIR bytecode holding VHLO (StableHLO's portable artifacts, as
// `stablehlo-translate --serialize --target=V` and jax.export write them,
// bytecode versions 1 to 6, VHLO 0.9 up to the current one), upgraded to
// current StableHLO ops and attributes in the form the text reader gives
// (mlir_module.h), so that a module and its artifact convert alike.
//
// Every count, length, index and offset is checked against the bytes
// actually present before it is used: malformed input gives an Error naming
// the section and byte offset, never a crash, and allocations are bounded
// by the input's size. Thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo {

Result<MlirModule> ReadBytecode(std::string_view bytes, std::string_view name = "<input>");

}  // namespace kiln::stablehlo
