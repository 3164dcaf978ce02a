#include "runtime/kernels/element_access.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "compiler/hlo/float_formats.h"

namespace kiln::runtime {
namespace {

using hlo::PrimitiveType;

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

// Converts between the "natural" value types of storage codecs and compute
// types, following XLA's convert semantics.
template <typename To, typename From>
To ConvertValue(From v) {
  if constexpr (IsComplex<To>::value) {
    if constexpr (IsComplex<From>::value) {
      return To(static_cast<typename To::value_type>(v.real()),
                static_cast<typename To::value_type>(v.imag()));
    } else {
      return To(static_cast<typename To::value_type>(v), 0);
    }
  } else if constexpr (IsComplex<From>::value) {
    return ConvertValue<To>(v.real());
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{};
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) {
      return std::numeric_limits<To>::lowest();
    }
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Stored as the C++ type S itself.
template <typename S>
struct NativeCodec {
  using Value = S;
  Value Load(const uint8_t* p) const {
    S v;
    std::memcpy(&v, p, sizeof(S));
    return v;
  }
  void Store(uint8_t* p, Value v) const { std::memcpy(p, &v, sizeof(S)); }
};

// Sub-byte integers: one byte each, sign-extended for signed types.
struct SubByteCodec {
  using Value = int64_t;
  int bits;
  bool is_signed;
  Value Load(const uint8_t* p) const {
    return is_signed ? static_cast<int8_t>(*p) : static_cast<int64_t>(*p);
  }
  void Store(uint8_t* p, Value v) const {
    uint8_t low = static_cast<uint8_t>(v) & static_cast<uint8_t>((1u << bits) - 1);
    if (is_signed && (low >> (bits - 1)) != 0) low |= static_cast<uint8_t>(0xFFu << bits);
    *p = low;
  }
};

struct PredCodec {
  using Value = bool;
  Value Load(const uint8_t* p) const { return *p != 0; }
  void Store(uint8_t* p, Value v) const { *p = v ? 1 : 0; }
};

struct BFloat16Codec {
  using Value = float;
  Value Load(const uint8_t* p) const {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return hlo::BFloat16ToFloat(bits);
  }
  void Store(uint8_t* p, Value v) const {
    uint16_t bits = hlo::FloatToBFloat16(v);
    std::memcpy(p, &bits, 2);
  }
};

struct HalfCodec {
  using Value = float;
  Value Load(const uint8_t* p) const {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return hlo::HalfToFloat(bits);
  }
  void Store(uint8_t* p, Value v) const {
    uint16_t bits = hlo::FloatToHalf(v);
    std::memcpy(p, &bits, 2);
  }
};

// f8 family and f4e2m1fn: one byte each.
struct NarrowFloatCodec {
  using Value = double;
  const hlo::FloatFormat* format;
  Value Load(const uint8_t* p) const { return hlo::DecodeNarrowFloat(*format, *p); }
  void Store(uint8_t* p, Value v) const {
    *p = static_cast<uint8_t>(hlo::EncodeNarrowFloat(*format, v));
  }
};

// Calls f(codec) with the codec of element type t; false for non-array types.
template <typename F>
bool VisitCodec(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kPred: f(PredCodec{}); return true;
    case PrimitiveType::kS1: f(SubByteCodec{1, true}); return true;
    case PrimitiveType::kS2: f(SubByteCodec{2, true}); return true;
    case PrimitiveType::kS4: f(SubByteCodec{4, true}); return true;
    case PrimitiveType::kU1: f(SubByteCodec{1, false}); return true;
    case PrimitiveType::kU2: f(SubByteCodec{2, false}); return true;
    case PrimitiveType::kU4: f(SubByteCodec{4, false}); return true;
    case PrimitiveType::kS8: f(NativeCodec<int8_t>{}); return true;
    case PrimitiveType::kS16: f(NativeCodec<int16_t>{}); return true;
    case PrimitiveType::kS32: f(NativeCodec<int32_t>{}); return true;
    case PrimitiveType::kS64: f(NativeCodec<int64_t>{}); return true;
    case PrimitiveType::kU8: f(NativeCodec<uint8_t>{}); return true;
    case PrimitiveType::kU16: f(NativeCodec<uint16_t>{}); return true;
    case PrimitiveType::kU32: f(NativeCodec<uint32_t>{}); return true;
    case PrimitiveType::kU64: f(NativeCodec<uint64_t>{}); return true;
    case PrimitiveType::kF32: f(NativeCodec<float>{}); return true;
    case PrimitiveType::kF64: f(NativeCodec<double>{}); return true;
    case PrimitiveType::kC64: f(NativeCodec<std::complex<float>>{}); return true;
    case PrimitiveType::kC128: f(NativeCodec<std::complex<double>>{}); return true;
    case PrimitiveType::kBF16: f(BFloat16Codec{}); return true;
    case PrimitiveType::kF16: f(HalfCodec{}); return true;
    default:
      if (const hlo::FloatFormat* format = hlo::NarrowFloatFormat(t)) {
        f(NarrowFloatCodec{format});
        return true;
      }
      return false;
  }
}

}  // namespace

ComputeType ComputeTypeFor(PrimitiveType t) {
  if (t == PrimitiveType::kF64) return ComputeType::kF64;
  if (t == PrimitiveType::kC64) return ComputeType::kC64;
  if (t == PrimitiveType::kC128) return ComputeType::kC128;
  if (hlo::IsFloatingPoint(t)) return ComputeType::kF32;
  if (hlo::IsSignedInteger(t)) return ComputeType::kS64;
  return ComputeType::kU64;
}

template <typename T>
T GetElementAs(const hlo::Literal& lit, int64_t i) {
  T out{};
  const uint8_t* p = lit.data().data() + i * ElementBytes(lit);
  VisitCodec(lit.shape().element_type(),
             [&](const auto& codec) { out = ConvertValue<T>(codec.Load(p)); });
  return out;
}

template <typename T>
void SetElementFrom(hlo::Literal& lit, int64_t i, T value) {
  uint8_t* p = lit.mutable_data().data() + i * ElementBytes(lit);
  VisitCodec(lit.shape().element_type(), [&](const auto& codec) {
    using Value = typename std::decay_t<decltype(codec)>::Value;
    codec.Store(p, ConvertValue<Value>(value));
  });
}

template <typename T>
std::vector<T> ElementsAs(const hlo::Literal& lit) {
  const int64_t n = lit.element_count();
  std::vector<T> out(n);
  if (n == 0) return out;  // both buffers may be null, which memcpy must not get
  const uint8_t* p = lit.data().data();
  VisitCodec(lit.shape().element_type(), [&](const auto& codec) {
    using Value = typename std::decay_t<decltype(codec)>::Value;
    if constexpr (std::is_same_v<Value, T>) {
      if (sizeof(T) == static_cast<size_t>(ElementBytes(lit))) {
        std::memcpy(out.data(), p, n * sizeof(T));
        return;
      }
    }
    const int64_t width = ElementBytes(lit);
    for (int64_t i = 0; i < n; ++i) out[i] = ConvertValue<T>(codec.Load(p + i * width));
  });
  return out;
}

template <typename T>
void StoreElements(std::span<const T> values, hlo::Literal& lit) {
  uint8_t* p = lit.mutable_data().data();
  const int64_t width = ElementBytes(lit);
  const int64_t n = static_cast<int64_t>(values.size());
  if (n == 0) return;  // both buffers may be null, which memcpy must not get
  VisitCodec(lit.shape().element_type(), [&](const auto& codec) {
    using Value = typename std::decay_t<decltype(codec)>::Value;
    if constexpr (std::is_same_v<Value, T>) {
      if (sizeof(T) == static_cast<size_t>(width)) {
        std::memcpy(p, values.data(), n * sizeof(T));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) codec.Store(p + i * width, ConvertValue<Value>(values[i]));
  });
}

// Whether `lit`'s elements are stored as T itself.
template <typename T>
bool StoredAs(const hlo::Literal& lit) {
  bool stored_as_t = false;
  VisitCodec(lit.shape().element_type(), [&](const auto& codec) {
    using Value = typename std::decay_t<decltype(codec)>::Value;
    stored_as_t = std::is_same_v<Value, T> && sizeof(T) == static_cast<size_t>(ElementBytes(lit));
  });
  return stored_as_t;
}

template <typename T>
const T* ElementsInPlace(const hlo::Literal& lit) {
  if (lit.element_count() == 0 || !StoredAs<T>(lit)) return nullptr;
  return reinterpret_cast<const T*>(lit.data().data());
}

template <typename T>
T* MutableElementsInPlace(hlo::Literal& lit) {
  if (lit.element_count() == 0 || !StoredAs<T>(lit)) return nullptr;
  return reinterpret_cast<T*>(lit.mutable_data().data());
}

#define KILN_INSTANTIATE_ELEMENT_ACCESS(T)                                  \
  template T GetElementAs<T>(const hlo::Literal&, int64_t);                 \
  template void SetElementFrom<T>(hlo::Literal&, int64_t, T);               \
  template std::vector<T> ElementsAs<T>(const hlo::Literal&);               \
  template void StoreElements<T>(std::span<const T>, hlo::Literal&);       \
  template const T* ElementsInPlace<T>(const hlo::Literal&);                \
  template T* MutableElementsInPlace<T>(hlo::Literal&);

KILN_INSTANTIATE_ELEMENT_ACCESS(float)
KILN_INSTANTIATE_ELEMENT_ACCESS(double)
KILN_INSTANTIATE_ELEMENT_ACCESS(std::complex<float>)
KILN_INSTANTIATE_ELEMENT_ACCESS(std::complex<double>)
KILN_INSTANTIATE_ELEMENT_ACCESS(int64_t)
KILN_INSTANTIATE_ELEMENT_ACCESS(uint64_t)
template bool GetElementAs<bool>(const hlo::Literal&, int64_t);
template void SetElementFrom<bool>(hlo::Literal&, int64_t, bool);

#undef KILN_INSTANTIATE_ELEMENT_ACCESS

}  // namespace kiln::runtime
