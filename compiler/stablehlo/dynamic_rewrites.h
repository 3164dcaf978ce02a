// The static op a dynamic-shape custom call (dynamic_ops.h) becomes once
// its shape operands are known, for shape refinement. Internal to
// kiln_stablehlo.
#pragma once

#include <functional>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/stablehlo/hlo_emitter.h"
#include "compiler/stablehlo/shape_folding.h"

namespace kiln::stablehlo {

// The folded value of an instruction, or null when it is not known.
using ValueLookup = std::function<const IntTensor*(const hlo::Instruction*)>;

// Emits the static op computing what `call` computes, reading `call`'s
// operands, whose values `known` gives. Fails naming the shape operand that
// is not known, or the value that does not fit the operand (a negative
// size, a slice out of bounds).
Result<hlo::Instruction*> RewriteDynamicCall(HloEmitter& emit, const hlo::Instruction& call,
                                             const ValueLookup& known);

}  // namespace kiln::stablehlo
