// CHLO's math functions as elementwise HLO, decomposed as StableHLO's CHLO
// legalization (chlo-legalize-to-stablehlo) decomposes them: Cephes
// polynomials for erf/erfc, Giles' approximation for erf_inv, Lanczos for
// lgamma and digamma, Cephes Chebyshev series for bessel_i1e, the bit
// arithmetic of next_after, and the modified Hull et al. algorithm for
// complex asin/acos/acosh/asinh. Each takes and returns instructions of the
// builder's shape; the special functions expect f32 or f64 operands
// (callers upcast f16/bf16 first, as the legalization does). Internal to
// kiln_stablehlo.
#pragma once

#include "compiler/stablehlo/expr_builder.h"

namespace kiln::stablehlo::chlo {

using I = hlo::Instruction*;

// chlo_special.cc
I Erf(ExprBuilder& m, I x);
I Erfc(ExprBuilder& m, I x);
I ErfInv(ExprBuilder& m, I x);
I Lgamma(ExprBuilder& m, I x);
I Digamma(ExprBuilder& m, I x);
I BesselI1e(ExprBuilder& m, I x);
I NextAfter(ExprBuilder& m, I x, I y);

// chlo_trig.cc: real or complex by the operand's element type.
I Acos(ExprBuilder& m, I x);
I Acosh(ExprBuilder& m, I x);
I Asin(ExprBuilder& m, I x);
I Asinh(ExprBuilder& m, I x);
I Atan(ExprBuilder& m, I x);
I Atanh(ExprBuilder& m, I x);
I Cosh(ExprBuilder& m, I x);
I Sinh(ExprBuilder& m, I x);
I Tan(ExprBuilder& m, I x);

}  // namespace kiln::stablehlo::chlo
