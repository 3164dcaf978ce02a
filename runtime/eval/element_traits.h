// How each HLO element type is stored in a literal and computed with.
//
// ElementTraits<T> maps an element type to its host storage type (what a
// literal holds, one per element), the type arithmetic is done in, and the
// Load/Store pair between them. bf16, f16 and the f8 family compute in float
// and round to nearest even on Store; sub-byte integers compute in 8 bits and
// wrap to their width on Store. DispatchElementType calls a generic lambda
// once with the traits of a runtime type, so typed loops are chosen once per
// op, never per element.
//
// Header-only, stateless; thread-safe.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "compiler/hlo/float_formats.h"
#include "compiler/hlo/primitive_type.h"

namespace kiln::runtime {

enum class ElementKind : uint8_t { kPred, kSigned, kUnsigned, kFloat, kComplex };

namespace element_internal {

template <hlo::PrimitiveType kType, typename StoredT, ElementKind kKindV, int kBitsV>
struct IntegerTraits {
  static constexpr hlo::PrimitiveType kPrimitiveType = kType;
  static constexpr ElementKind kKind = kKindV;
  static constexpr int kBits = kBitsV;
  static constexpr bool kNarrowFloat = false;
  using Stored = StoredT;
  using Compute = StoredT;
  static Compute Load(Stored v) { return v; }
  static Stored Store(Compute v) {
    if constexpr (kBits >= static_cast<int>(sizeof(Stored) * 8)) {
      return v;
    } else if constexpr (kKind == ElementKind::kSigned) {
      // Sign-extend the low kBits bits.
      constexpr int kShift = 8 * sizeof(Stored) - kBits;
      using U = std::make_unsigned_t<Stored>;
      return static_cast<Stored>(static_cast<Stored>(static_cast<U>(v) << kShift) >> kShift);
    } else {
      return static_cast<Stored>(v & ((Stored{1} << kBits) - 1));
    }
  }
};

template <hlo::PrimitiveType kType, typename T>
struct WideFloatTraits {
  static constexpr hlo::PrimitiveType kPrimitiveType = kType;
  static constexpr ElementKind kKind = ElementKind::kFloat;
  static constexpr int kBits = 8 * sizeof(T);
  static constexpr bool kNarrowFloat = false;
  using Stored = T;
  using Compute = T;
  static Compute Load(Stored v) { return v; }
  static Stored Store(Compute v) { return v; }
};

struct BF16Traits {
  static constexpr hlo::PrimitiveType kPrimitiveType = hlo::PrimitiveType::kBF16;
  static constexpr ElementKind kKind = ElementKind::kFloat;
  static constexpr int kBits = 16;
  static constexpr bool kNarrowFloat = true;
  using Stored = uint16_t;
  using Compute = float;
  static Compute Load(Stored v) { return hlo::BFloat16ToFloat(v); }
  static Stored Store(Compute v) { return hlo::FloatToBFloat16(v); }
  static Stored StoreDouble(double v) {
    return static_cast<Stored>(hlo::EncodeNarrowFloat(*hlo::NarrowFloatFormat(kPrimitiveType), v));
  }
};

struct F16Traits {
  static constexpr hlo::PrimitiveType kPrimitiveType = hlo::PrimitiveType::kF16;
  static constexpr ElementKind kKind = ElementKind::kFloat;
  static constexpr int kBits = 16;
  static constexpr bool kNarrowFloat = true;
  using Stored = uint16_t;
  using Compute = float;
  static Compute Load(Stored v) { return hlo::HalfToFloat(v); }
  static Stored Store(Compute v) { return hlo::FloatToHalf(v); }
  static Stored StoreDouble(double v) {
    return static_cast<Stored>(hlo::EncodeNarrowFloat(*hlo::NarrowFloatFormat(kPrimitiveType), v));
  }
};

// 8-bit (and f4) floats: decoded through a 256-entry table built on first
// use, encoded with round-to-nearest-even from double.
template <hlo::PrimitiveType kType>
struct F8Traits {
  static constexpr hlo::PrimitiveType kPrimitiveType = kType;
  static constexpr ElementKind kKind = ElementKind::kFloat;
  static constexpr int kBits = 8;
  static constexpr bool kNarrowFloat = true;
  using Stored = uint8_t;
  using Compute = float;
  static const float* DecodeTable() {
    static const auto* table = [] {
      auto* t = new float[256];
      const hlo::FloatFormat& f = *hlo::NarrowFloatFormat(kType);
      for (int i = 0; i < 256; ++i) t[i] = static_cast<float>(hlo::DecodeNarrowFloat(f, i));
      return t;
    }();
    return table;
  }
  static Compute Load(Stored v) { return DecodeTable()[v]; }
  static Stored Store(Compute v) { return StoreDouble(v); }
  static Stored StoreDouble(double v) {
    return static_cast<Stored>(hlo::EncodeNarrowFloat(*hlo::NarrowFloatFormat(kType), v));
  }
};

template <hlo::PrimitiveType kType, typename T>
struct ComplexTraits {
  static constexpr hlo::PrimitiveType kPrimitiveType = kType;
  static constexpr ElementKind kKind = ElementKind::kComplex;
  static constexpr int kBits = 16 * sizeof(T);
  static constexpr bool kNarrowFloat = false;
  using Stored = std::complex<T>;
  using Compute = std::complex<T>;
  static Compute Load(Stored v) { return v; }
  static Stored Store(Compute v) { return v; }
};

}  // namespace element_internal

template <hlo::PrimitiveType kType>
struct ElementTraits;

#define KILN_ELEMENT_TRAITS(type, ...) \
  template <>                          \
  struct ElementTraits<hlo::PrimitiveType::type> : element_internal::__VA_ARGS__ {}

KILN_ELEMENT_TRAITS(kPred, IntegerTraits<hlo::PrimitiveType::kPred, uint8_t, ElementKind::kPred, 8>);
KILN_ELEMENT_TRAITS(kS1, IntegerTraits<hlo::PrimitiveType::kS1, int8_t, ElementKind::kSigned, 1>);
KILN_ELEMENT_TRAITS(kS2, IntegerTraits<hlo::PrimitiveType::kS2, int8_t, ElementKind::kSigned, 2>);
KILN_ELEMENT_TRAITS(kS4, IntegerTraits<hlo::PrimitiveType::kS4, int8_t, ElementKind::kSigned, 4>);
KILN_ELEMENT_TRAITS(kS8, IntegerTraits<hlo::PrimitiveType::kS8, int8_t, ElementKind::kSigned, 8>);
KILN_ELEMENT_TRAITS(kS16, IntegerTraits<hlo::PrimitiveType::kS16, int16_t, ElementKind::kSigned, 16>);
KILN_ELEMENT_TRAITS(kS32, IntegerTraits<hlo::PrimitiveType::kS32, int32_t, ElementKind::kSigned, 32>);
KILN_ELEMENT_TRAITS(kS64, IntegerTraits<hlo::PrimitiveType::kS64, int64_t, ElementKind::kSigned, 64>);
KILN_ELEMENT_TRAITS(kU1, IntegerTraits<hlo::PrimitiveType::kU1, uint8_t, ElementKind::kUnsigned, 1>);
KILN_ELEMENT_TRAITS(kU2, IntegerTraits<hlo::PrimitiveType::kU2, uint8_t, ElementKind::kUnsigned, 2>);
KILN_ELEMENT_TRAITS(kU4, IntegerTraits<hlo::PrimitiveType::kU4, uint8_t, ElementKind::kUnsigned, 4>);
KILN_ELEMENT_TRAITS(kU8, IntegerTraits<hlo::PrimitiveType::kU8, uint8_t, ElementKind::kUnsigned, 8>);
KILN_ELEMENT_TRAITS(kU16, IntegerTraits<hlo::PrimitiveType::kU16, uint16_t, ElementKind::kUnsigned, 16>);
KILN_ELEMENT_TRAITS(kU32, IntegerTraits<hlo::PrimitiveType::kU32, uint32_t, ElementKind::kUnsigned, 32>);
KILN_ELEMENT_TRAITS(kU64, IntegerTraits<hlo::PrimitiveType::kU64, uint64_t, ElementKind::kUnsigned, 64>);
KILN_ELEMENT_TRAITS(kF16, F16Traits);
KILN_ELEMENT_TRAITS(kBF16, BF16Traits);
KILN_ELEMENT_TRAITS(kF32, WideFloatTraits<hlo::PrimitiveType::kF32, float>);
KILN_ELEMENT_TRAITS(kF64, WideFloatTraits<hlo::PrimitiveType::kF64, double>);
KILN_ELEMENT_TRAITS(kF8E5M2, F8Traits<hlo::PrimitiveType::kF8E5M2>);
KILN_ELEMENT_TRAITS(kF8E4M3, F8Traits<hlo::PrimitiveType::kF8E4M3>);
KILN_ELEMENT_TRAITS(kF8E4M3FN, F8Traits<hlo::PrimitiveType::kF8E4M3FN>);
KILN_ELEMENT_TRAITS(kF8E4M3B11FNUZ, F8Traits<hlo::PrimitiveType::kF8E4M3B11FNUZ>);
KILN_ELEMENT_TRAITS(kF8E3M4, F8Traits<hlo::PrimitiveType::kF8E3M4>);
KILN_ELEMENT_TRAITS(kF8E5M2FNUZ, F8Traits<hlo::PrimitiveType::kF8E5M2FNUZ>);
KILN_ELEMENT_TRAITS(kF8E4M3FNUZ, F8Traits<hlo::PrimitiveType::kF8E4M3FNUZ>);
KILN_ELEMENT_TRAITS(kF4E2M1FN, F8Traits<hlo::PrimitiveType::kF4E2M1FN>);
KILN_ELEMENT_TRAITS(kF8E8M0FNU, F8Traits<hlo::PrimitiveType::kF8E8M0FNU>);
KILN_ELEMENT_TRAITS(kC64, ComplexTraits<hlo::PrimitiveType::kC64, float>);
KILN_ELEMENT_TRAITS(kC128, ComplexTraits<hlo::PrimitiveType::kC128, double>);
#undef KILN_ELEMENT_TRAITS

namespace element_internal {
template <hlo::PrimitiveType kType, typename Fn, typename Fallback>
auto DispatchOne(Fn& fn, Fallback& fallback) {
  if constexpr (kType == hlo::PrimitiveType::kToken || kType == hlo::PrimitiveType::kOpaque) {
    return fallback();
  } else {
    return fn(ElementTraits<kType>{});
  }
}
}  // namespace element_internal

// Calls fn(ElementTraits<t>{}) and returns its result; for types without
// elements (token, opaque, tuple) returns fallback().
template <typename Fn, typename Fallback>
auto DispatchElementType(hlo::PrimitiveType t, Fn&& fn, Fallback&& fallback) {
  using P = hlo::PrimitiveType;
  switch (t) {
#define KILN_DISPATCH_CASE(e, name, bits) \
  case P::e:                              \
    return element_internal::DispatchOne<P::e>(fn, fallback);
    KILN_PRIMITIVE_TYPES(KILN_DISPATCH_CASE)
#undef KILN_DISPATCH_CASE
    default:
      return fallback();
  }
}

}  // namespace kiln::runtime
