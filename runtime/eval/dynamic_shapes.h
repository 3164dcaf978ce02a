// Dynamic dimensions (`s32[<=8]`): the ops that set, read and use the actual
// size of a dimension, and how that size follows a value.
//
// A dynamic array is evaluated as XLA lays it out: a literal of the bound
// shape whose leading part along each dimension is valid (the rest is
// padding), plus the actual sizes carried with the Value. Ops other than the
// ones here compute on the padded literal; PropagateDynamicSizes then keeps
// the operand's sizes on results of the same bound dimensions (elementwise
// ops, copies), and ToResultLiteral cuts the final value to its actual
// sizes. Errors name the instruction. Pure functions; thread-safe.
#pragma once

#include <span>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "runtime/eval/value.h"

namespace kiln::runtime {

// set-dimension-size(operand, size): the operand with dimension `dimensions`
// set to `size`, which must lie in [0, bound].
Result<Value> EvalSetDimensionSize(const hlo::Instruction& instr, std::span<const Value> operands);

// get-dimension-size(operand): the actual size of the dimension as s32[].
Result<Value> EvalGetDimensionSize(const hlo::Instruction& instr, std::span<const Value> operands);

// dynamic-reshape(operand, size...): the operand's valid elements in
// row-major order, laid out as an array of the given sizes inside the
// result's bounds. As in XLA, a stream longer than the sizes' product is cut
// short and a shorter one is padded (with zeros here).
Result<Value> EvalDynamicReshape(const hlo::Instruction& instr, std::span<const Value> operands);

// Gives `result` the dynamic sizes of the first dynamic operand with the same
// bound dimensions, when `instr`'s shape has dynamic dimensions.
void PropagateDynamicSizes(const hlo::Instruction& instr, std::span<const Value> operands,
                           Value& result);

// An argument for a parameter of shape `parameter`: the literal itself, or,
// when it is smaller than the parameter's bound along dynamic dimensions
// (an executable's kernel receiving a dynamic array cut to its actual
// size), the literal padded to the bound shape with those actual sizes.
Value ArgumentValue(const hlo::Literal& literal, const hlo::Shape& parameter);

// The value as a literal of its actual sizes (tuples element by element).
hlo::Literal ToResultLiteral(Value value);

}  // namespace kiln::runtime
