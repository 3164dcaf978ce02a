// Whole-literal element type conversion with the semantics of `convert`
// (the elementwise convert kernels).
//
// Used where an op moves values into a result of another element type: XLA's
// verifier (allow_mixed_precision) lets data-movement ops such as copy,
// transpose or slice declare a floating-point result type other than their
// operand's, and the value is then the operand's converted. Pure function;
// thread-safe.
#pragma once

#include "compiler/hlo/literal.h"
#include "base/status.h"

namespace kiln::runtime {

// An array literal with `in`'s dimensions holding its elements converted to
// `to`. Fails when `in` is a tuple or has no data, or when convert is not
// defined between the two types.
Result<hlo::Literal> ConvertLiteral(const hlo::Literal& in, hlo::PrimitiveType to);

}  // namespace kiln::runtime
