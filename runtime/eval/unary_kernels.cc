// Elementwise unary ops: arithmetic, transcendental, rounding and bit
// counting, plus the ops whose result type differs from the operand's
// (abs/real/imag of complex, is-finite).
#include <bit>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "runtime/eval/elementwise_loops.h"

namespace kiln::runtime::elementwise_internal {
namespace {

using hlo::Opcode;

// expm1/log1p for complex operands, which the standard library lacks.
template <typename T>
T Expm1(T x) {
  return std::expm1(x);
}
template <typename T>
std::complex<T> Expm1(std::complex<T> x) {
  return std::exp(x) - std::complex<T>(1);
}
template <typename T>
T Log1p(T x) {
  return std::log1p(x);
}
template <typename T>
std::complex<T> Log1p(std::complex<T> x) {
  return std::log(std::complex<T>(1) + x);
}

// Float and complex math through the standard library (float compute for
// bf16/f16/f8, so they round once on Store).
#define KILN_FLOAT_OP(Name, expr, complex_ok)                                         \
  struct Name {                                                                       \
    template <class Tr>                                                               \
    static constexpr bool kSupports = kIsFloat<Tr> || (complex_ok && kIsComplex<Tr>); \
    template <class Tr>                                                               \
    static typename Tr::Compute Apply(typename Tr::Compute x) {                       \
      using C = typename Tr::Compute;                                                 \
      (void)sizeof(C);                                                                \
      return expr;                                                                    \
    }                                                                                 \
  };

KILN_FLOAT_OP(ExpOp, std::exp(x), true)
KILN_FLOAT_OP(Expm1Op, Expm1(x), true)
KILN_FLOAT_OP(LogOp, std::log(x), true)
KILN_FLOAT_OP(Log1pOp, Log1p(x), true)
KILN_FLOAT_OP(SqrtOp, std::sqrt(x), true)
KILN_FLOAT_OP(RsqrtOp, C(1) / std::sqrt(x), true)
KILN_FLOAT_OP(CbrtOp, std::cbrt(x), false)
KILN_FLOAT_OP(SinOp, std::sin(x), true)
KILN_FLOAT_OP(CosOp, std::cos(x), true)
KILN_FLOAT_OP(TanOp, std::tan(x), true)
KILN_FLOAT_OP(TanhOp, std::tanh(x), true)
KILN_FLOAT_OP(SinhOp, std::sinh(x), true)
KILN_FLOAT_OP(CoshOp, std::cosh(x), true)
KILN_FLOAT_OP(AsinOp, std::asin(x), true)
KILN_FLOAT_OP(AcosOp, std::acos(x), true)
KILN_FLOAT_OP(AsinhOp, std::asinh(x), true)
KILN_FLOAT_OP(AcoshOp, std::acosh(x), true)
KILN_FLOAT_OP(AtanhOp, std::atanh(x), true)
KILN_FLOAT_OP(ErfOp, std::erf(x), false)
KILN_FLOAT_OP(LogisticOp, C(1) / (C(1) + std::exp(-x)), true)
KILN_FLOAT_OP(FloorOp, std::floor(x), false)
KILN_FLOAT_OP(CeilOp, std::ceil(x), false)
KILN_FLOAT_OP(RoundAfzOp, std::round(x), false)
KILN_FLOAT_OP(RoundEvenOp, std::nearbyint(x), false)
#undef KILN_FLOAT_OP

}  // namespace

namespace {

struct NegateOp {
  template <class Tr>
  static constexpr bool kSupports = !kIsPred<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    using C = typename Tr::Compute;
    if constexpr (kIsInt<Tr>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(U{0} - static_cast<U>(x));  // wraps: -INT_MIN == INT_MIN
    } else {
      return -x;
    }
  }
};

struct AbsOp {  // complex abs has a real result: see AbsComplexLoop
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr> || kIsFloat<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    if constexpr (kIsSigned<Tr>) {
      return x < 0 ? NegateOp::Apply<Tr>(x) : x;
    } else if constexpr (kIsInt<Tr>) {
      return x;
    } else {
      return std::fabs(x);
    }
  }
};

struct SignOp {
  template <class Tr>
  static constexpr bool kSupports = !kIsPred<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    using C = typename Tr::Compute;
    if constexpr (kIsComplex<Tr>) {
      return x == C(0) ? x : x / std::abs(x);
    } else if constexpr (kIsFloat<Tr>) {
      if (std::isnan(x) || x == 0) return x;  // NaN stays NaN, ±0 stays ±0
      return std::copysign(C(1), x);
    } else if constexpr (kIsSigned<Tr>) {
      return static_cast<C>((x > 0) - (x < 0));
    } else {
      return static_cast<C>(x != 0);
    }
  }
};

struct NotOp {
  template <class Tr>
  static constexpr bool kSupports = kIsPred<Tr> || kIsInt<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    using C = typename Tr::Compute;
    if constexpr (kIsPred<Tr>) return static_cast<C>(x == 0);
    else return static_cast<C>(~x);
  }
};

// The element's bits as an unsigned value of exactly Tr::kBits bits.
template <class Tr>
uint64_t UnsignedBits(typename Tr::Compute x) {
  using U = std::make_unsigned_t<typename Tr::Compute>;
  uint64_t bits = static_cast<U>(x);
  if constexpr (Tr::kBits < 64) bits &= (uint64_t{1} << Tr::kBits) - 1;
  return bits;
}

struct ClzOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    return static_cast<typename Tr::Compute>(std::countl_zero(UnsignedBits<Tr>(x)) -
                                             (64 - Tr::kBits));
  }
};

struct PopcntOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    return static_cast<typename Tr::Compute>(std::popcount(UnsignedBits<Tr>(x)));
  }
};

// abs/real/imag of complex: the result is the component's real type.
template <class Tr, int kPart>  // 0: abs, 1: real, 2: imag
void ComplexPartLoop(const ElementwiseArgs& a, const ElementwiseParams&) {
  using S = typename Tr::Stored;
  using R = typename S::value_type;
  const S* x = static_cast<const S*>(a.in[0]);
  R* y = static_cast<R*>(a.out);
  for (int64_t i = 0; i < a.n; ++i) {
    if constexpr (kPart == 0) y[i] = std::abs(x[i]);
    else if constexpr (kPart == 1) y[i] = x[i].real();
    else y[i] = x[i].imag();
  }
}

// real of a real operand is the identity; imag of a real operand is zero.
struct RealOp {
  template <class Tr>
  static constexpr bool kSupports = kIsFloat<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) { return x; }
};
struct ImagOp {
  template <class Tr>
  static constexpr bool kSupports = kIsFloat<Tr>;
  template <class Tr>
  static typename Tr::Compute Apply(typename Tr::Compute x) {
    return typename Tr::Compute(0);
  }
};

template <class Tr, class Unused>
struct IsFiniteLoop {
  static void Run(const ElementwiseArgs& a, const ElementwiseParams&) {
    using S = typename Tr::Stored;
    const S* x = static_cast<const S*>(a.in[0]);
    uint8_t* y = static_cast<uint8_t*>(a.out);
    for (int64_t i = 0; i < a.n; ++i) y[i] = std::isfinite(Tr::Load(x[i])) ? 1 : 0;
  }
};
struct FloatTypesOnly {
  template <class Tr>
  static constexpr bool kSupports = kIsFloat<Tr>;
};

template <class Op>
ElementwiseFn Unary(hlo::PrimitiveType t) {
  return ResolveTyped<Op, UnaryLoop>(t);
}

ElementwiseFn ComplexPart(hlo::PrimitiveType t, int part) {
  if (t == hlo::PrimitiveType::kC64) {
    using Tr = ElementTraits<hlo::PrimitiveType::kC64>;
    return part == 0 ? &ComplexPartLoop<Tr, 0> : part == 1 ? &ComplexPartLoop<Tr, 1>
                                                           : &ComplexPartLoop<Tr, 2>;
  }
  if (t == hlo::PrimitiveType::kC128) {
    using Tr = ElementTraits<hlo::PrimitiveType::kC128>;
    return part == 0 ? &ComplexPartLoop<Tr, 0> : part == 1 ? &ComplexPartLoop<Tr, 1>
                                                           : &ComplexPartLoop<Tr, 2>;
  }
  return nullptr;
}

}  // namespace

ElementwiseFn ResolveUnary(Opcode opcode, hlo::PrimitiveType t, hlo::PrimitiveType result) {
  const bool complex = hlo::IsComplex(t);
  switch (opcode) {
    case Opcode::kAbs: return complex ? ComplexPart(t, 0) : Unary<AbsOp>(t);
    case Opcode::kReal: return complex ? ComplexPart(t, 1) : Unary<RealOp>(t);
    case Opcode::kImag: return complex ? ComplexPart(t, 2) : Unary<ImagOp>(t);
    case Opcode::kIsFinite:
      return result == hlo::PrimitiveType::kPred ? ResolveTyped<FloatTypesOnly, IsFiniteLoop>(t)
                                                 : nullptr;
    case Opcode::kNegate: return Unary<NegateOp>(t);
    case Opcode::kSign: return Unary<SignOp>(t);
    case Opcode::kNot: return Unary<NotOp>(t);
    case Opcode::kClz: return Unary<ClzOp>(t);
    case Opcode::kPopulationCount: return Unary<PopcntOp>(t);
    case Opcode::kExp: return Unary<ExpOp>(t);
    case Opcode::kExpm1: return Unary<Expm1Op>(t);
    case Opcode::kLog: return Unary<LogOp>(t);
    case Opcode::kLog1p: return Unary<Log1pOp>(t);
    case Opcode::kSqrt: return Unary<SqrtOp>(t);
    case Opcode::kRsqrt: return Unary<RsqrtOp>(t);
    case Opcode::kCbrt: return Unary<CbrtOp>(t);
    case Opcode::kSin: return Unary<SinOp>(t);
    case Opcode::kCos: return Unary<CosOp>(t);
    case Opcode::kTan: return Unary<TanOp>(t);
    case Opcode::kTanh: return Unary<TanhOp>(t);
    case Opcode::kSinh: return Unary<SinhOp>(t);
    case Opcode::kCosh: return Unary<CoshOp>(t);
    case Opcode::kAsin: return Unary<AsinOp>(t);
    case Opcode::kAcos: return Unary<AcosOp>(t);
    case Opcode::kAsinh: return Unary<AsinhOp>(t);
    case Opcode::kAcosh: return Unary<AcoshOp>(t);
    case Opcode::kAtanh: return Unary<AtanhOp>(t);
    case Opcode::kErf: return Unary<ErfOp>(t);
    case Opcode::kLogistic: return Unary<LogisticOp>(t);
    case Opcode::kFloor: return Unary<FloorOp>(t);
    case Opcode::kCeil: return Unary<CeilOp>(t);
    case Opcode::kRoundNearestAfz: return Unary<RoundAfzOp>(t);
    case Opcode::kRoundNearestEven: return Unary<RoundEvenOp>(t);
    default: return nullptr;
  }
}

}  // namespace kiln::runtime::elementwise_internal
