// Dynamic-shape ops (op_handlers.h).
#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {

Status ConvertDynamicOp(Converter& c, const Operation& op) { return ConvertAsOpaqueCustomCall(c, op); }

}  // namespace kiln::stablehlo::convert_internal
