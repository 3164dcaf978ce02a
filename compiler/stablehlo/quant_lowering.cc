// Quantized ops (op_handlers.h).
#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {

Status ConvertUniformQuantize(Converter& c, const Operation& op) { return c.Unsupported(op, "quantized types are not supported"); }
Status ConvertUniformDequantize(Converter& c, const Operation& op) { return c.Unsupported(op, "quantized types are not supported"); }

}  // namespace kiln::stablehlo::convert_internal
