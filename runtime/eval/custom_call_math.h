// Elementwise math that JAX's and XLA's builders emit as custom-calls
// ("xla_builder.math.Cosh", ...) when the HLO is dumped before their
// expansion: cosh, acosh, asin, asinh, atan, acos on floating-point and
// complex arrays. Values are computed in double (complex double) and rounded
// once to the element type.
//
// FindMathCustomCall returns nullptr for other targets; the function then
// fails with an error naming the instruction on a non-floating operand or a
// result shape other than the operand's. Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"

namespace kiln::runtime {

using MathCustomCallFn = Result<hlo::Literal> (*)(const hlo::Instruction& instr,
                                                  const hlo::Literal& operand);

MathCustomCallFn FindMathCustomCall(std::string_view target);

}  // namespace kiln::runtime
