// CHLO's inverse trigonometric and hyperbolic functions (chlo_math.h).
#include <cmath>
#include <numbers>

#include "compiler/stablehlo/chlo_math.h"

namespace kiln::stablehlo::chlo {
namespace {

using hlo::PrimitiveType;

bool IsComplex(I x) { return hlo::IsComplex(x->shape().element_type()); }

hlo::Shape RealShape(I z) {
  hlo::Shape s = z->shape();
  s.set_element_type(z->shape().element_type() == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64);
  return s;
}

// hypot(a, b) of non-negative a, b without overflow: mx * sqrt(1 + (mn/mx)^2),
// with the first-order term kept where the square root rounds to 1.
I Hypot(ExprBuilder& m, I a, I b) {
  I mx = m.Max(a, b);
  I mn = m.Min(a, b);
  I one = m.C(1);
  I ratio = m.Div(mn, mx);
  I r = m.Mul(ratio, ratio);
  I sqa = m.Sqrt(m.Add(one, r));
  I small = m.And(m.Eq(sqa, one), m.Gt(r, m.C(0)));
  I general = m.Select(small, m.Add(mx, m.Div(m.Mul(mx, r), m.C(2))), m.Mul(mx, sqa));
  return m.Select(m.Eq(mx, mn), m.Mul(m.Sqrt(m.C(2)), mx), general);
}

// The parts of the modified Hull et al. algorithm shared by complex asin
// and acos: for z = x + iy,
//   real(asin(z)) = atan2(x, q),  real(acos(z)) = atan2(q, x),
//   imag(asin(z)) = -imag(acos(z)) = imag (sign of y).
struct HullParts {
  I q;
  I imag;  // unsigned, before the sign of y is applied
  I signed_x;
  I signed_y;
};

HullParts Hull(ExprBuilder& m, I z) {
  HullParts h;
  h.signed_x = m.Real(z);
  h.signed_y = m.Imag(z);
  I x = m.Abs(h.signed_x);
  I y = m.Abs(h.signed_y);
  I one = m.C(1);
  I half = m.C(0.5);
  I zero = m.C(0);
  I safe_max = m.Div(m.Sqrt(m.MaxFinite()), m.C(8));
  I xp1 = m.Add(x, one);
  I xm1 = m.Sub(x, one);
  I r = Hypot(m, m.Abs(xp1), y);
  I s = Hypot(m, m.Abs(xm1), y);
  I a = m.Mul(half, m.Add(r, s));
  I half_apx = m.Mul(half, m.Add(a, x));
  I yy = m.Mul(y, y);
  I rpxp1 = m.Add(r, xp1);
  I smxm1 = m.Sub(s, xm1);
  I spxm1 = m.Add(s, xm1);
  I q_small = m.Sqrt(m.Mul(half_apx, m.Add(m.Div(yy, rpxp1), smxm1)));
  I q_large_x = m.Mul(y, m.Sqrt(m.Add(m.Div(half_apx, rpxp1), m.Div(half_apx, spxm1))));
  h.q = m.Select(m.Ge(m.Max(x, y), safe_max), y, m.Select(m.Le(x, one), q_small, q_large_x));
  // Imaginary part.
  I safe_max_opt =
      m.Select(m.Lt(x, m.Mul(safe_max, m.C(1e12))), m.Mul(safe_max, m.C(1e-6)), m.Mul(safe_max, m.C(100.0)));
  I y_large = m.Ge(y, safe_max_opt);
  I mx = m.Select(y_large, y, x);
  I xoy = m.Select(m.And(y_large, m.Not(m.Eq(y, m.Inf()))), m.Div(x, y), zero);
  I imag_large = m.Add(m.Add(m.Log(m.C(2)), m.Log(mx)), m.Mul(half, m.Log1p(m.Mul(xoy, xoy))));
  I tiny_y = m.And(m.Lt(y, m.Mul(m.Sqrt(m.SmallestNormal()), m.C(4))), m.Lt(x, one));
  I ap1 = m.Add(a, one);
  I half_yy = m.Mul(half, yy);
  I divide_half_yy_rpxp1 = m.Div(half_yy, rpxp1);
  I am1 = m.Select(tiny_y, m.Neg(m.Div(m.Mul(xp1, xm1), ap1)),
                   m.Select(m.Ge(x, one), m.Add(divide_half_yy_rpxp1, m.Mul(half, spxm1)),
                            m.Select(m.Le(a, m.C(1.5)), m.Add(divide_half_yy_rpxp1, m.Div(half_yy, smxm1)),
                                     m.Sub(a, one))));
  I sq = m.Sqrt(m.Mul(am1, ap1));
  I imag_safe = m.Select(tiny_y, m.Div(y, sq), m.Log1p(m.Add(am1, sq)));
  h.imag = m.Select(m.Ge(mx, m.Select(y_large, safe_max_opt, safe_max)), imag_large, imag_safe);
  return h;
}

I ComplexAsin(ExprBuilder& c, I z) {
  ExprBuilder m(c.emit(), RealShape(z));
  HullParts h = Hull(m, z);
  I imag = m.Select(m.Lt(h.signed_y, m.C(0)), m.Neg(h.imag), h.imag);
  return m.Complex(m.Atan2(h.signed_x, h.q), imag);
}

I ComplexAcos(ExprBuilder& c, I z) {
  ExprBuilder m(c.emit(), RealShape(z));
  HullParts h = Hull(m, z);
  I imag = m.Select(m.Lt(h.signed_y, m.C(0)), h.imag, m.Neg(h.imag));
  return m.Complex(m.Atan2(h.q, h.signed_x), imag);
}

// atanh(x + iy) = 1/4 log1p(4x / ((1 - x)^2 + y^2)) + i/2 atan2(2y, (1 - x)(1 + x) - y^2),
// with the asymptotes x / |z|^2 and sign(y) pi/2 for large |z|.
I ComplexAtanh(ExprBuilder& c, I z) {
  ExprBuilder m(c.emit(), RealShape(z));
  I x = m.Real(z);
  I y = m.Imag(z);
  I one = m.C(1);
  I one_minus_x = m.Sub(one, x);
  I re = m.Mul(m.C(0.25), m.Log1p(m.Div(m.Mul(m.C(4), x), m.Add(m.Mul(one_minus_x, one_minus_x), m.Mul(y, y)))));
  I im = m.Mul(m.C(0.5), m.Atan2(m.Mul(m.C(2), y), m.Sub(m.Mul(one_minus_x, m.Add(one, x)), m.Mul(y, y))));
  I big = m.Ge(m.Max(m.Abs(x), m.Abs(y)), m.Div(m.Sqrt(m.MaxFinite()), m.C(4)));
  I mx = m.Max(m.Abs(x), m.Abs(y));
  I xs = m.Div(x, mx);
  I ys = m.Div(y, mx);
  I re_big = m.Div(m.Div(xs, mx), m.Add(m.Mul(xs, xs), m.Mul(ys, ys)));
  I half_pi = m.C(std::numbers::pi / 2);
  I im_big = m.Select(m.Lt(y, m.C(0)), m.Neg(half_pi), half_pi);
  return m.Complex(m.Select(big, re_big, re), m.Select(big, im_big, im));
}

// exp(x + log(1/2)) and exp(log(1/2) - x), which do not overflow where
// e^x / 2 would not.
std::pair<I, I> HalfExps(ExprBuilder& m, I x) {
  I log_half = m.C(std::log(0.5));
  return {m.Exp(m.Add(x, log_half)), m.Exp(m.Sub(log_half, x))};
}

}  // namespace

I Acos(ExprBuilder& m, I x) {
  if (IsComplex(x)) return ComplexAcos(m, x);
  I one = m.C(1);
  I one_plus_x = m.Add(one, x);
  return m.Mul(m.C(2), m.Atan2(m.Sqrt(m.Mul(m.Sub(one, x), one_plus_x)), one_plus_x));
}

I Acosh(ExprBuilder& m, I x) {
  if (IsComplex(x)) {
    // acosh(z) = i acos(z) (or -i acos(z) below the real axis).
    ExprBuilder r(m.emit(), RealShape(x));
    I w = ComplexAcos(m, x);
    I c = r.Complex(r.Neg(r.Imag(w)), r.Real(w));
    return r.Select(r.Lt(r.Imag(x), r.C(0)), m.emit().Unary(hlo::Opcode::kNegate, c), c);
  }
  I one = m.C(1);
  I sqrt_xm1 = m.Sqrt(m.Sub(x, one));
  I general = m.Log1p(m.Mul(sqrt_xm1, m.Add(m.Sqrt(m.Add(x, one)), sqrt_xm1)));
  I large = m.Add(m.Log(m.C(2)), m.Log(x));
  return m.Select(m.Ge(x, m.Div(m.MaxFinite(), m.C(2))), large, general);
}

I Asin(ExprBuilder& m, I x) {
  if (IsComplex(x)) return ComplexAsin(m, x);
  I one = m.C(1);
  return m.Mul(m.C(2), m.Atan2(x, m.Add(one, m.Sqrt(m.Mul(m.Sub(one, x), m.Add(one, x))))));
}

I Asinh(ExprBuilder& m, I x) {
  if (IsComplex(x)) {
    // asinh(z) = -i asin(i z).
    ExprBuilder r(m.emit(), RealShape(x));
    I w = ComplexAsin(m, r.Complex(r.Neg(r.Imag(x)), r.Real(x)));
    return r.Complex(r.Imag(w), r.Neg(r.Real(w)));
  }
  I ax = m.Abs(x);
  I one = m.C(1);
  I ax2 = m.Mul(ax, ax);
  I general = m.Log1p(m.Add(ax, m.Div(ax2, m.Add(one, m.Sqrt(m.Add(one, ax2))))));
  I large = m.Add(m.Log(m.C(2)), m.Log(ax));
  return m.Mul(m.Sign(x), m.Select(m.Ge(ax, m.Sqrt(m.MaxFinite())), large, general));
}

I Atan(ExprBuilder& m, I x) {
  if (IsComplex(x)) {
    // atan(z) = -i atanh(i z).
    ExprBuilder r(m.emit(), RealShape(x));
    I w = ComplexAtanh(m, r.Complex(r.Neg(r.Imag(x)), r.Real(x)));
    return r.Complex(r.Imag(w), r.Neg(r.Real(w)));
  }
  return m.Atan2(x, m.C(1));
}

I Atanh(ExprBuilder& m, I x) {
  if (IsComplex(x)) return ComplexAtanh(m, x);
  I value = m.Mul(m.Sub(m.Log1p(x), m.Log1p(m.Neg(x))), m.C(0.5));
  return m.Select(m.Gt(m.Abs(x), m.C(1)), m.NaN(), value);
}

I Cosh(ExprBuilder& m, I x) {
  auto [up, down] = HalfExps(m, x);
  return m.Add(up, down);
}

I Sinh(ExprBuilder& m, I x) {
  auto [up, down] = HalfExps(m, x);
  I large = m.Sub(up, down);
  if (IsComplex(x)) return large;
  // For |x| < 1: (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2 avoids the
  // cancellation of e^x - e^-x.
  I e = m.Expm1(x);
  I small = m.Mul(m.C(0.5), m.Add(e, m.Div(e, m.Add(e, m.C(1)))));
  return m.Select(m.Lt(m.Abs(x), m.C(1)), small, large);
}

I Tan(ExprBuilder& m, I x) {
  if (!IsComplex(x)) return m.emit().Unary(hlo::Opcode::kTan, x);
  // tan(a + ib) = (tan(a) + i tanh(b)) / (1 - i tan(a) tanh(b)).
  ExprBuilder r(m.emit(), RealShape(x));
  I tan_a = r.emit().Unary(hlo::Opcode::kTan, r.Real(x));
  I tanh_b = r.Tanh(r.Imag(x));
  I num = r.Complex(tan_a, tanh_b);
  I den = r.Complex(r.C(1), r.Neg(r.Mul(tan_a, tanh_b)));
  return m.Div(num, den);
}

}  // namespace kiln::stablehlo::chlo
