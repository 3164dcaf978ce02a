// Elementwise arithmetic over HLO instructions of one shape, for writing
// decompositions (CHLO's math functions, quantization) as formulas:
// `m.Add(m.Mul(x, x), m.C(1))`. Constants take the shape and element type
// of the builder's reference shape (a complex type gets real constants as
// (c, 0)); each distinct constant is made once.
//
// Borrows the emitter, which must outlive the builder. Not thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "compiler/stablehlo/hlo_emitter.h"

namespace kiln::stablehlo {

class ExprBuilder {
 public:
  ExprBuilder(HloEmitter& emit, hlo::Shape like) : emit_(emit), like_(std::move(like)) {}

  HloEmitter& emit() { return emit_; }
  const hlo::Shape& shape() const { return like_; }
  hlo::PrimitiveType type() const { return like_.element_type(); }

  using I = hlo::Instruction*;
  // A constant of the reference shape.
  I C(double v);
  // Bits of one element, broadcast.
  I Bits(uint64_t bits);
  I MaxFinite();
  I SmallestNormal();
  I SmallestSubnormal();
  I Inf(bool negative = false);
  I NaN();

  I Add(I a, I b) { return Bin(hlo::Opcode::kAdd, a, b); }
  I Sub(I a, I b) { return Bin(hlo::Opcode::kSubtract, a, b); }
  I Mul(I a, I b) { return Bin(hlo::Opcode::kMultiply, a, b); }
  I Div(I a, I b) { return Bin(hlo::Opcode::kDivide, a, b); }
  I Max(I a, I b) { return Bin(hlo::Opcode::kMaximum, a, b); }
  I Min(I a, I b) { return Bin(hlo::Opcode::kMinimum, a, b); }
  I Pow(I a, I b) { return Bin(hlo::Opcode::kPower, a, b); }
  I Rem(I a, I b) { return Bin(hlo::Opcode::kRemainder, a, b); }
  I Atan2(I a, I b) { return Bin(hlo::Opcode::kAtan2, a, b); }
  I And(I a, I b) { return Bin(hlo::Opcode::kAnd, a, b); }
  I Or(I a, I b) { return Bin(hlo::Opcode::kOr, a, b); }
  I Complex(I re, I im) { return emit_.Binary(hlo::Opcode::kComplex, re, im); }

  I Neg(I x) { return Un(hlo::Opcode::kNegate, x); }
  I Abs(I x) { return Un(hlo::Opcode::kAbs, x); }
  I Sqrt(I x) { return Un(hlo::Opcode::kSqrt, x); }
  I Log(I x) { return Un(hlo::Opcode::kLog, x); }
  I Log1p(I x) { return Un(hlo::Opcode::kLog1p, x); }
  I Exp(I x) { return Un(hlo::Opcode::kExp, x); }
  I Expm1(I x) { return Un(hlo::Opcode::kExpm1, x); }
  I Sin(I x) { return Un(hlo::Opcode::kSin, x); }
  I Cos(I x) { return Un(hlo::Opcode::kCos, x); }
  I Tanh(I x) { return Un(hlo::Opcode::kTanh, x); }
  I Floor(I x) { return Un(hlo::Opcode::kFloor, x); }
  I Sign(I x) { return Un(hlo::Opcode::kSign, x); }
  I IsFinite(I x) { return Un(hlo::Opcode::kIsFinite, x); }
  I Not(I x) { return Un(hlo::Opcode::kNot, x); }
  I Real(I x) { return Un(hlo::Opcode::kReal, x); }
  I Imag(I x) { return Un(hlo::Opcode::kImag, x); }

  I Lt(I a, I b) { return emit_.Compare(a, b, "LT"); }
  I Le(I a, I b) { return emit_.Compare(a, b, "LE"); }
  I Gt(I a, I b) { return emit_.Compare(a, b, "GT"); }
  I Ge(I a, I b) { return emit_.Compare(a, b, "GE"); }
  I Eq(I a, I b) { return emit_.Compare(a, b, "EQ"); }
  I Ne(I a, I b) { return emit_.Compare(a, b, "NE"); }
  I Select(I p, I a, I b) { return emit_.Select(p, a, b); }
  I Clamp(I lo, I x, I hi);
  I Convert(I x, hlo::PrimitiveType t) { return emit_.Convert(x, t); }
  I BitcastTo(I x, hlo::PrimitiveType t);

 private:
  I Bin(hlo::Opcode op, I a, I b) { return emit_.Binary(op, a, b); }
  I Un(hlo::Opcode op, I x) { return emit_.Unary(op, x); }

  HloEmitter& emit_;
  hlo::Shape like_;
  std::unordered_map<uint64_t, I> constants_;  // by the bits of the double
};

}  // namespace kiln::stablehlo
