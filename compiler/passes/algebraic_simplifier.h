// AlgebraicSimplifier: small local rewrites that never change results.
//
//  - x * 1 and 1 * x -> x; x + 0 and 0 + x -> x, where the constant is a
//    constant whose every element is that value or a broadcast of such a
//    scalar constant (the usual form of scalar constants in HLO).
//  - broadcast of a scalar constant to a one-element shape -> the constant;
//    broadcast whose result equals its operand -> the operand;
//    broadcast of broadcast -> one broadcast.
//  - reshape of reshape -> one reshape; reshape to the operand's own shape
//    -> the operand.
//  - transpose of transpose -> one transpose (or the operand when the
//    permutations cancel); identity transpose -> the operand.
//  - slice taking the whole operand with unit strides -> the operand;
//    pad with all-zero low, high and interior padding -> the operand.
//  - get-tuple-element of a tuple instruction -> that element (so that
//    producers and consumers around a tuple can fuse).
// A replacement is only made when the replacement's shape equals the
// replaced instruction's shape exactly (layout included). Replaced
// instructions are left for DCE. Stateless; thread-safe across modules.
#pragma once

#include "compiler/passes/pass.h"

namespace kiln::passes {

class AlgebraicSimplifier : public Pass {
 public:
  std::string_view name() const override { return "algsimp"; }
  Result<bool> Run(hlo::Module& module) override;
};

// Simplifies one computation; true when anything changed.
Result<bool> SimplifyComputation(hlo::Computation& computation);

}  // namespace kiln::passes
