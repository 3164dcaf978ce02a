// A canonical text of a function (mlir_module.h): its signature and ops in
// generic form, values numbered in definition order, attributes sorted. It
// does not depend on SSA names, locations, attribute order or whether ops
// were written pretty or generic, so it can stand for a function the
// converter cannot convert (an element type HLO lacks) in a key.
//
// Pure function; thread-safe.
#pragma once

#include <string>

#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo {

std::string CanonicalFunctionText(const MlirModule& module, const Function& fn);

}  // namespace kiln::stablehlo
