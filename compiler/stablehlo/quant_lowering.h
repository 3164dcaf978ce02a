// Quantized element types (`!quant.uniform<i8:f32, 0.5:-3>`) lowered to
// integer and float arithmetic as the StableHLO specification defines them
// and its interpreter evaluates them: a quantized value is its storage
// integers; quantize is clamp(round_nearest_even(x / scale + zero_point))
// in the expressed type, converted to storage; dequantize is
// (q - zero_point) * scale; any other op on quantized values dequantizes
// its operands, applies the op to the expressed values and quantizes its
// results (the spec's dequantize_op_quantize). Per-axis parameters are
// broadcast along their dimension. Internal to kiln_stablehlo.
#pragma once

#include "compiler/stablehlo/converter.h"

namespace kiln::stablehlo::convert_internal {

// `x` (storage integers of shape `x->shape()`) as values of q's expressed type.
hlo::Instruction* Dequantize(HloEmitter& emit, hlo::Instruction* x, const QuantInfo& q);
// `x` (floats) as storage integers of `q`.
hlo::Instruction* Quantize(HloEmitter& emit, hlo::Instruction* x, const QuantInfo& q);

// Whether the op reads or makes a value of a quantized type as a number
// (not only moving it: calls, loops, tuples, bitcast_convert take the
// storage integers as they are).
bool HasQuantizedTypes(const Converter& c, const Operation& op);

// Converts an op on quantized values with `handler` over dequantized
// operands, then quantizes its quantized results; the op's regions
// (a reducer) compute on expressed values too.
Status ConvertDequantizeOpQuantize(Converter& c, const Operation& op, OpHandler handler);

}  // namespace kiln::stablehlo::convert_internal
