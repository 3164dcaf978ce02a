// Data-movement ops: each computes `instr`'s value from its operands'
// values (operands[i] is the value of instr.operand(i)).
//
// Covers broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice (start indices clamped into bounds as XLA does),
// concatenate, pad (negative and interior padding), iota, reverse, and
// bitcast-convert between element types of different widths (the
// dynamic-dimension ops are in dynamic_shapes.h). An op other than bitcast
// and bitcast-convert whose result element type differs from an operand's
// (mixed precision) moves that operand's values converted to the result
// type. Errors (bad attributes, sizes that do not match) name the
// instruction. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"

namespace kiln::runtime {

using LiteralSpan = std::span<const hlo::Literal* const>;

Result<hlo::Literal> EvalBroadcast(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalReshape(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalBitcast(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalTranspose(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalSlice(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalDynamicSlice(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalDynamicUpdateSlice(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalConcatenate(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalPad(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalIota(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalReverse(const hlo::Instruction& instr, LiteralSpan operands);
Result<hlo::Literal> EvalBitcastConvert(const hlo::Instruction& instr, LiteralSpan operands);

// The value of an integer scalar literal (any integer type or pred).
Result<int64_t> ScalarToInt64(const hlo::Literal& literal);
// Element i of an integer (or pred) literal.
Result<int64_t> IntegerElement(const hlo::Literal& literal, int64_t i);

}  // namespace kiln::runtime
