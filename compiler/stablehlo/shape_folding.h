// Constant folding of the small integer computations that produce shapes
// in dynamic StableHLO programs (`concatenate(reshape(convert(%dim)), 4)`,
// products of dimension sizes, comparisons and selects that clamp them),
// for shape refinement (shape_refinement.h).
//
// Values are integer or pred arrays of at most kMaxFoldedElements elements,
// held as int64 and wrapped to their element type after each operation.
// Folding never fails: what it cannot fold (another opcode, a float, a
// division by zero, an unknown operand) is simply not known. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"

namespace kiln::stablehlo {

inline constexpr int64_t kMaxFoldedElements = 4096;

struct IntTensor {
  hlo::PrimitiveType type = hlo::PrimitiveType::kS64;
  std::vector<int64_t> dims;
  std::vector<int64_t> values;  // row-major
};

// The value of an integer or pred array literal, if small enough.
std::optional<IntTensor> IntTensorOf(const hlo::Literal& literal);
hlo::Literal LiteralOf(const IntTensor& value);

// The value of `instr` given its operands' values (`operands[i]` null when
// unknown); nullopt when it cannot be folded.
std::optional<IntTensor> FoldInstruction(const hlo::Instruction& instr,
                                         std::span<const IntTensor* const> operands);

}  // namespace kiln::stablehlo
