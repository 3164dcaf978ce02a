#include "compiler/stablehlo/expr_builder.h"

#include <bit>
#include <cmath>
#include <limits>

#include "compiler/hlo/float_formats.h"

namespace kiln::stablehlo {
namespace {

using hlo::PrimitiveType;

PrimitiveType RealType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

}  // namespace

ExprBuilder::I ExprBuilder::C(double v) {
  const uint64_t key = std::bit_cast<uint64_t>(v);
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  I c = emit_.ConstantLike(like_, v);
  constants_.emplace(key, c);
  return c;
}

ExprBuilder::I ExprBuilder::Bits(uint64_t bits) { return emit_.ConstantBitsLike(like_, bits); }

ExprBuilder::I ExprBuilder::MaxFinite() {
  const PrimitiveType t = RealType(type());
  if (t == PrimitiveType::kF64) return C(std::numeric_limits<double>::max());
  if (t == PrimitiveType::kF32) return C(std::numeric_limits<float>::max());
  const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t);
  return C(f != nullptr ? hlo::MaxFiniteNarrowFloat(*f) : 0.0);
}

ExprBuilder::I ExprBuilder::SmallestNormal() {
  const PrimitiveType t = RealType(type());
  if (t == PrimitiveType::kF64) return C(std::numeric_limits<double>::min());
  if (t == PrimitiveType::kF32) return C(std::numeric_limits<float>::min());
  const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t);
  return C(f != nullptr ? std::ldexp(1.0, 1 - f->bias) : 0.0);
}

ExprBuilder::I ExprBuilder::SmallestSubnormal() {
  const PrimitiveType t = RealType(type());
  if (t == PrimitiveType::kF64) return C(std::numeric_limits<double>::denorm_min());
  if (t == PrimitiveType::kF32) return C(std::numeric_limits<float>::denorm_min());
  const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t);
  return C(f != nullptr ? std::ldexp(1.0, 1 - f->bias - f->mantissa_bits) : 0.0);
}

ExprBuilder::I ExprBuilder::Inf(bool negative) {
  return C(negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
}

ExprBuilder::I ExprBuilder::NaN() { return C(std::numeric_limits<double>::quiet_NaN()); }

ExprBuilder::I ExprBuilder::Clamp(I lo, I x, I hi) {
  return emit_.Add(hlo::Opcode::kClamp, x->shape(), {lo, x, hi});
}

ExprBuilder::I ExprBuilder::BitcastTo(I x, PrimitiveType t) {
  hlo::Shape s = x->shape();
  s.set_element_type(t);
  return emit_.Add(hlo::Opcode::kBitcastConvert, std::move(s), {x});
}

}  // namespace kiln::stablehlo
