// Elementwise binary ops with XLA's integer rules (wrapping arithmetic,
// x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN, shifts past the width give 0 or
// the sign), NaN-propagating maximum/minimum, plus select and clamp.
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/eval/elementwise_loops.h"

namespace kiln::runtime::elementwise_internal {
namespace {

using hlo::Opcode;

// Unsigned type at least as wide as int, so that arithmetic wraps without
// undefined behaviour after integer promotion.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class Tr>
inline constexpr bool kIsNumeric = kIsInt<Tr> || kIsFloat<Tr> || kIsComplex<Tr>;

struct AddOp {
  template <class Tr>
  static constexpr bool kSupports = kIsNumeric<Tr> || kIsPred<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsPred<Tr>) return a | b;
    else if constexpr (kIsInt<Tr>) return static_cast<C>(WrapType<C>(a) + WrapType<C>(b));
    else return a + b;
  }
};

struct SubtractOp {
  template <class Tr>
  static constexpr bool kSupports = kIsNumeric<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<Tr>) return static_cast<C>(WrapType<C>(a) - WrapType<C>(b));
    else return a - b;
  }
};

struct MultiplyOp {
  template <class Tr>
  static constexpr bool kSupports = kIsNumeric<Tr> || kIsPred<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsPred<Tr>) return a & b;
    else if constexpr (kIsInt<Tr>) return static_cast<C>(WrapType<C>(a) * WrapType<C>(b));
    else return a * b;
  }
};

struct DivideOp {
  template <class Tr>
  static constexpr bool kSupports = kIsNumeric<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<Tr>) {
      if (b == 0) return static_cast<C>(-1);  // all ones, also for unsigned
      if constexpr (kIsSigned<Tr>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return a;
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};

struct RemainderOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr> || kIsFloat<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<Tr>) {
      if (b == 0) return a;
      if constexpr (kIsSigned<Tr>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return 0;
      }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};

// IEEE 754-2019 maximum/minimum: NaN if either is NaN, +0 > -0. Written as
// a chain of selects on values of the float type (no branches, no integer
// compares) so GCC turns each loop into packed compares and blends. Equal
// operands combine their bits: AND keeps +0 for maximum, OR keeps -0 for
// minimum.
template <typename F>
F CombineBits(F a, F b, bool use_and) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  const Bits x = std::bit_cast<Bits>(a), y = std::bit_cast<Bits>(b);
  return std::bit_cast<F>(use_and ? (x & y) : (x | y));
}

template <typename F, bool kMaximum>
F FloatMinMax(F a, F b) {
  F r = (kMaximum ? a > b : a < b) ? a : b;
  const F tie = CombineBits(a, b, kMaximum);
  r = a == b ? tie : r;
  r = a != a ? a : r;
  r = b != b ? b : r;
  return r;
}

struct MaximumOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr> || kIsFloat<Tr> || kIsPred<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsFloat<Tr>) {
      return FloatMinMax<C, true>(a, b);
    } else {
      return a > b ? a : b;
    }
  }
};

struct MinimumOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr> || kIsFloat<Tr> || kIsPred<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    if constexpr (kIsFloat<Tr>) {
      return FloatMinMax<C, false>(a, b);
    } else {
      return a < b ? a : b;
    }
  }
};

struct PowerOp {
  template <class Tr>
  static constexpr bool kSupports = kIsNumeric<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C base, C exponent) {
    if constexpr (kIsInt<Tr>) {
      // Negative exponents give 0 except for a base of 1 (as XLA does).
      if constexpr (kIsSigned<Tr>) {
        if (exponent < 0) return static_cast<C>(base == 1 ? 1 : 0);
      }
      WrapType<C> result = 1;
      WrapType<C> b = static_cast<WrapType<C>>(base);
      for (auto e = static_cast<std::make_unsigned_t<C>>(exponent); e != 0; e >>= 1) {
        if (e & 1) result *= b;
        b *= b;
      }
      return static_cast<C>(result);
    } else {
      return std::pow(base, exponent);
    }
  }
};

struct Atan2Op {
  template <class Tr>
  static constexpr bool kSupports = kIsFloat<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) { return std::atan2(a, b); }
};

#define KILN_BITWISE_OP(Name, op)                                         \
  struct Name {                                                           \
    template <class Tr>                                                   \
    static constexpr bool kSupports = kIsInt<Tr> || kIsPred<Tr>;          \
    template <class Tr, class C = typename Tr::Compute>                   \
    static C Apply(C a, C b) { return static_cast<C>(a op b); }           \
  };
KILN_BITWISE_OP(AndOp, &)
KILN_BITWISE_OP(OrOp, |)
KILN_BITWISE_OP(XorOp, ^)
#undef KILN_BITWISE_OP

// Shift amounts are read as unsigned; past the type's width a left or
// logical shift gives 0 and an arithmetic shift gives the sign.
template <class Tr, class C>
uint64_t ShiftAmount(C b) {
  return static_cast<std::make_unsigned_t<C>>(b);
}

struct ShiftLeftOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    uint64_t s = ShiftAmount<Tr>(b);
    if (s >= static_cast<uint64_t>(Tr::kBits)) return 0;
    return static_cast<C>(WrapType<C>(a) << s);
  }
};

struct ShiftRightLogicalOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    uint64_t s = ShiftAmount<Tr>(b);
    if (s >= static_cast<uint64_t>(Tr::kBits)) return 0;
    uint64_t bits = static_cast<std::make_unsigned_t<C>>(a);
    if constexpr (Tr::kBits < 64) bits &= (uint64_t{1} << Tr::kBits) - 1;
    return static_cast<C>(bits >> s);
  }
};

struct ShiftRightArithmeticOp {
  template <class Tr>
  static constexpr bool kSupports = kIsInt<Tr>;
  template <class Tr, class C = typename Tr::Compute>
  static C Apply(C a, C b) {
    uint64_t s = ShiftAmount<Tr>(b);
    using S = std::make_signed_t<C>;
    // Unsigned types are shifted as their signed reinterpretation.
    S sa = static_cast<S>(a);
    if constexpr (!kIsSigned<Tr> && Tr::kBits < static_cast<int>(8 * sizeof(C))) {
      constexpr int kPad = 8 * sizeof(C) - Tr::kBits;
      sa = static_cast<S>(static_cast<S>(static_cast<C>(a) << kPad) >> kPad);
    }
    if (s >= static_cast<uint64_t>(Tr::kBits)) return static_cast<C>(sa < 0 ? -1 : 0);
    return static_cast<C>(sa >> s);
  }
};

template <class Op>
ElementwiseFn Binary(hlo::PrimitiveType t) {
  return ResolveTyped<Op, BinaryLoop>(t);
}

// complex(re, im): two real operands, complex result.
template <class Real>
void MakeComplexLoop(const ElementwiseArgs& a, const ElementwiseParams&) {
  const Real* re = static_cast<const Real*>(a.in[0]);
  const Real* im = static_cast<const Real*>(a.in[1]);
  auto* y = static_cast<std::complex<Real>*>(a.out);
  for (int64_t i = 0; i < a.n; ++i) y[i] = std::complex<Real>(re[i], im[i]);
}

template <class Tr, class Unused>
struct SelectLoop {
  static void Run(const ElementwiseArgs& a, const ElementwiseParams&) {
    using S = typename Tr::Stored;
    const uint8_t* p = static_cast<const uint8_t*>(a.in[0]);
    const S* t = static_cast<const S*>(a.in[1]);
    const S* f = static_cast<const S*>(a.in[2]);
    S* y = static_cast<S*>(a.out);
    for (int64_t i = 0; i < a.n; ++i) y[i] = p[i] ? t[i] : f[i];
  }
};

// clamp(lo, x, hi) = min(max(x, lo), hi) with maximum/minimum's NaN rules.
template <class Tr, class Unused>
struct ClampLoop {
  static void Run(const ElementwiseArgs& a, const ElementwiseParams&) {
    using S = typename Tr::Stored;
    const S* lo = static_cast<const S*>(a.in[0]);
    const S* x = static_cast<const S*>(a.in[1]);
    const S* hi = static_cast<const S*>(a.in[2]);
    S* y = static_cast<S*>(a.out);
    for (int64_t i = 0; i < a.n; ++i) {
      auto v = MaximumOp::Apply<Tr>(Tr::Load(x[i]), Tr::Load(lo[i]));
      y[i] = Tr::Store(MinimumOp::Apply<Tr>(v, Tr::Load(hi[i])));
    }
  }
};

struct AnyType {
  template <class Tr>
  static constexpr bool kSupports = true;
};
struct Ordered {
  template <class Tr>
  static constexpr bool kSupports = !kIsComplex<Tr>;
};

template <int kBytes>
void CopyLoop(const ElementwiseArgs& a, const ElementwiseParams&) {
  if (a.out != a.in[0]) std::memcpy(a.out, a.in[0], static_cast<size_t>(a.n) * kBytes);
}

}  // namespace

ElementwiseFn ResolveBinary(Opcode opcode, hlo::PrimitiveType t) {
  switch (opcode) {
    case Opcode::kAdd: return Binary<AddOp>(t);
    case Opcode::kSubtract: return Binary<SubtractOp>(t);
    case Opcode::kMultiply: return Binary<MultiplyOp>(t);
    case Opcode::kDivide: return Binary<DivideOp>(t);
    case Opcode::kRemainder: return Binary<RemainderOp>(t);
    case Opcode::kMaximum: return Binary<MaximumOp>(t);
    case Opcode::kMinimum: return Binary<MinimumOp>(t);
    case Opcode::kPower: return Binary<PowerOp>(t);
    case Opcode::kAtan2: return Binary<Atan2Op>(t);
    case Opcode::kAnd: return Binary<AndOp>(t);
    case Opcode::kOr: return Binary<OrOp>(t);
    case Opcode::kXor: return Binary<XorOp>(t);
    case Opcode::kShiftLeft: return Binary<ShiftLeftOp>(t);
    case Opcode::kShiftRightLogical: return Binary<ShiftRightLogicalOp>(t);
    case Opcode::kShiftRightArithmetic: return Binary<ShiftRightArithmeticOp>(t);
    case Opcode::kComplex:
      if (t == hlo::PrimitiveType::kF32) return &MakeComplexLoop<float>;
      if (t == hlo::PrimitiveType::kF64) return &MakeComplexLoop<double>;
      return nullptr;
    default: return nullptr;
  }
}

ElementwiseFn ResolveSelect(hlo::PrimitiveType t) { return ResolveTyped<AnyType, SelectLoop>(t); }
ElementwiseFn ResolveClamp(hlo::PrimitiveType t) { return ResolveTyped<Ordered, ClampLoop>(t); }

ElementwiseFn ResolveCopy(int bytes) {
  switch (bytes) {
    case 1: return &CopyLoop<1>;
    case 2: return &CopyLoop<2>;
    case 4: return &CopyLoop<4>;
    case 8: return &CopyLoop<8>;
    case 16: return &CopyLoop<16>;
    default: return nullptr;
  }
}

}  // namespace kiln::runtime::elementwise_internal
