// convert between every pair of element types, and reduce-precision.
//
// convert follows XLA: float -> integer truncates and saturates, NaN -> 0;
// anything -> pred is `!= 0`; complex -> real keeps the real part; real ->
// complex has a zero imaginary part; narrow floats round to nearest even
// once, from the wider of the source and f32.
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "runtime/eval/elementwise_loops.h"

namespace kiln::runtime::elementwise_internal {
namespace {

using hlo::PrimitiveType;

// Integer bounds of a (possibly sub-byte) integer type.
template <class To>
constexpr double IntMax() {
  if constexpr (To::kKind == ElementKind::kSigned) return std::ldexp(1.0, To::kBits - 1) - 1;
  else return std::ldexp(1.0, To::kBits) - 1;
}
template <class To>
constexpr double IntMin() {
  if constexpr (To::kKind == ElementKind::kSigned) return -std::ldexp(1.0, To::kBits - 1);
  else return 0;
}

// Converts a real value (double, float or an integer) to To's storage.
template <class To, typename V>
typename To::Stored ConvertReal(V v) {
  using S = typename To::Stored;
  if constexpr (kIsPred<To>) {
    return v != V(0) ? 1 : 0;
  } else if constexpr (kIsComplex<To>) {
    return S(static_cast<typename S::value_type>(v), 0);
  } else if constexpr (kIsInt<To>) {
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(v)) return 0;
      // Compare as double: the bounds of 64-bit types round up to 2^63/2^64,
      // which makes `>=` exactly the overflow test.
      const double d = static_cast<double>(v);
      if (d >= IntMax<To>()) return To::Store(static_cast<S>(std::numeric_limits<S>::max() >>
                                                            (8 * sizeof(S) - To::kBits)));
      if (d <= IntMin<To>()) {
        if constexpr (To::kKind == ElementKind::kSigned) {
          return To::Store(static_cast<S>(static_cast<int64_t>(IntMin<To>())));
        } else {
          return 0;
        }
      }
      if constexpr (To::kKind == ElementKind::kSigned) return To::Store(static_cast<S>(static_cast<int64_t>(d)));
      else return To::Store(static_cast<S>(static_cast<uint64_t>(d)));
    } else {
      return To::Store(static_cast<S>(v));  // integers wrap
    }
  } else if constexpr (To::kNarrowFloat) {
    if constexpr (std::is_same_v<V, float>) return To::Store(v);
    else return To::StoreDouble(static_cast<double>(v));
  } else {
    return static_cast<S>(v);
  }
}

template <class From, class To>
typename To::Stored ConvertElement(typename From::Stored s) {
  auto v = From::Load(s);
  if constexpr (kIsComplex<From>) {
    if constexpr (kIsComplex<To>) {
      return typename To::Stored(v);
    } else if constexpr (kIsPred<To>) {
      return v != decltype(v)(0) ? 1 : 0;
    } else {
      return ConvertReal<To>(v.real());
    }
  } else {
    return ConvertReal<To>(v);
  }
}

template <class From, class To>
void ConvertLoop(const ElementwiseArgs& a, const ElementwiseParams&) {
  const auto* x = static_cast<const typename From::Stored*>(a.in[0]);
  auto* y = static_cast<typename To::Stored*>(a.out);
  for (int64_t i = 0; i < a.n; ++i) y[i] = ConvertElement<From, To>(x[i]);
}

// XLA's reduce-precision on the bits of a float or double: round the
// mantissa to nearest even, then send exponents beyond the reduced range to
// inf or (signed) zero. NaN stays NaN when mantissa bits remain, else inf.
template <typename F, typename Bits>
F ReducePrecision(F value, int exponent_bits, int mantissa_bits) {
  constexpr int kMantissa = std::numeric_limits<F>::digits - 1;
  constexpr int kExponent = 8 * sizeof(F) - 1 - kMantissa;
  constexpr int kBias = (1 << (kExponent - 1)) - 1;
  Bits bits = std::bit_cast<Bits>(value);
  if (mantissa_bits < kMantissa) {
    const Bits last_bit_mask = Bits{1} << (kMantissa - mantissa_bits);
    const Bits base_bias = (last_bit_mask >> 1) - 1;
    const Bits last_bit = (bits & last_bit_mask) >> (kMantissa - mantissa_bits);
    const Bits truncation_mask = ~(last_bit_mask - 1);
    bits = (bits + last_bit + base_bias) & truncation_mask;
  }
  if (exponent_bits < kExponent) {
    const Bits sign_mask = Bits{1} << (8 * sizeof(F) - 1);
    const Bits exponent_mask = ((Bits{1} << kExponent) - 1) << kMantissa;
    const Bits exponent = bits & exponent_mask;
    const Bits reduced_bias = (Bits{1} << (exponent_bits - 1)) - 1;
    const Bits max_exponent = static_cast<Bits>(kBias) + reduced_bias;
    const Bits min_exponent = static_cast<Bits>(kBias) - reduced_bias;
    if (exponent > (max_exponent << kMantissa)) {
      bits = (bits & sign_mask) | exponent_mask;
    } else if (exponent <= (min_exponent << kMantissa)) {
      bits = bits & sign_mask;
    }
  }
  F result = std::bit_cast<F>(bits);
  if (std::isnan(value)) {
    return mantissa_bits > 0 ? value : std::numeric_limits<F>::infinity();
  }
  return result;
}

template <class Tr, class Unused>
struct ReducePrecisionLoop {
  static void Run(const ElementwiseArgs& a, const ElementwiseParams& p) {
    using S = typename Tr::Stored;
    const S* x = static_cast<const S*>(a.in[0]);
    S* y = static_cast<S*>(a.out);
    for (int64_t i = 0; i < a.n; ++i) {
      if constexpr (std::is_same_v<typename Tr::Compute, double>) {
        y[i] = Tr::Store(ReducePrecision<double, uint64_t>(Tr::Load(x[i]), p.exponent_bits,
                                                           p.mantissa_bits));
      } else {
        y[i] = Tr::Store(ReducePrecision<float, uint32_t>(Tr::Load(x[i]), p.exponent_bits,
                                                          p.mantissa_bits));
      }
    }
  }
};

struct FloatOnly {
  template <class Tr>
  static constexpr bool kSupports = kIsFloat<Tr>;
};

}  // namespace

ElementwiseFn ResolveConvert(PrimitiveType from, PrimitiveType to) {
  return DispatchElementType(
      from,
      [to](auto from_traits) -> ElementwiseFn {
        using From = decltype(from_traits);
        return DispatchElementType(
            to,
            [](auto to_traits) -> ElementwiseFn {
              using To = decltype(to_traits);
              return &ConvertLoop<From, To>;
            },
            []() -> ElementwiseFn { return nullptr; });
      },
      []() -> ElementwiseFn { return nullptr; });
}

ElementwiseFn ResolveReducePrecision(PrimitiveType type) {
  return ResolveTyped<FloatOnly, ReducePrecisionLoop>(type);
}

}  // namespace kiln::runtime::elementwise_internal
