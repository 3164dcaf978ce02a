#include "compiler/hlo/float_formats.h"

#include <bit>
#include <cmath>
#include <limits>

namespace kiln::hlo {
namespace {

using Nan = FloatFormat::Nan;

constexpr FloatFormat kF16{16, 5, 10, 15, true, true, Nan::kIeee};
constexpr FloatFormat kBF16{16, 8, 7, 127, true, true, Nan::kIeee};
constexpr FloatFormat kF8E5M2{8, 5, 2, 15, true, true, Nan::kIeee};
constexpr FloatFormat kF8E4M3{8, 4, 3, 7, true, true, Nan::kIeee};
constexpr FloatFormat kF8E3M4{8, 3, 4, 3, true, true, Nan::kIeee};
constexpr FloatFormat kF8E4M3FN{8, 4, 3, 7, true, false, Nan::kAllOnes};
constexpr FloatFormat kF8E4M3FNUZ{8, 4, 3, 8, true, false, Nan::kNegZero};
constexpr FloatFormat kF8E5M2FNUZ{8, 5, 2, 16, true, false, Nan::kNegZero};
constexpr FloatFormat kF8E4M3B11FNUZ{8, 4, 3, 11, true, false, Nan::kNegZero};
constexpr FloatFormat kF4E2M1FN{4, 2, 1, 1, true, false, Nan::kNone};
constexpr FloatFormat kF8E8M0FNU{8, 8, 0, 127, false, false, Nan::kAllOnes};

uint32_t NanBits(const FloatFormat& f, bool negative) {
  int mbits = f.mantissa_bits;
  int ebits = f.exponent_bits;
  uint32_t sign = (negative && f.has_sign) ? (1u << (ebits + mbits)) : 0;
  switch (f.nan) {
    case Nan::kIeee:
      return sign | (((1u << ebits) - 1) << mbits) | (1u << (mbits - 1));
    case Nan::kAllOnes:
      return sign | ((1u << (ebits + mbits)) - 1);
    case Nan::kNegZero:
      return 1u << (ebits + mbits);
    case Nan::kNone:
      return 0;  // unreachable for encodable values; callers check ranges
  }
  return 0;
}

// Largest biased exponent field that holds finite values.
int MaxExponentField(const FloatFormat& f) {
  int all_ones = (1 << f.exponent_bits) - 1;
  return (f.nan == Nan::kIeee) ? all_ones - 1 : all_ones;
}

// Largest mantissa field allowed with the largest exponent field.
uint32_t MaxMantissaAtTop(const FloatFormat& f) {
  uint32_t all = (1u << f.mantissa_bits) - 1;
  return f.nan == Nan::kAllOnes ? (f.mantissa_bits == 0 ? 0 : all - 1) : all;
}

}  // namespace

const FloatFormat* NarrowFloatFormat(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return &kF16;
    case PrimitiveType::kBF16: return &kBF16;
    case PrimitiveType::kF8E5M2: return &kF8E5M2;
    case PrimitiveType::kF8E4M3: return &kF8E4M3;
    case PrimitiveType::kF8E3M4: return &kF8E3M4;
    case PrimitiveType::kF8E4M3FN: return &kF8E4M3FN;
    case PrimitiveType::kF8E4M3FNUZ: return &kF8E4M3FNUZ;
    case PrimitiveType::kF8E5M2FNUZ: return &kF8E5M2FNUZ;
    case PrimitiveType::kF8E4M3B11FNUZ: return &kF8E4M3B11FNUZ;
    case PrimitiveType::kF4E2M1FN: return &kF4E2M1FN;
    case PrimitiveType::kF8E8M0FNU: return &kF8E8M0FNU;
    default: return nullptr;
  }
}

double MaxFiniteNarrowFloat(const FloatFormat& f) {
  int e = MaxExponentField(f) - f.bias;
  double mant = 1.0 + static_cast<double>(MaxMantissaAtTop(f)) / (1u << f.mantissa_bits);
  if (f.mantissa_bits == 0) mant = 1.0;
  return std::ldexp(mant, e);
}

uint32_t EncodeNarrowFloat(const FloatFormat& f, double v) {
  const int m = f.mantissa_bits;
  const bool negative = std::signbit(v) && f.has_sign;
  const uint32_t sign = negative ? (1u << (f.exponent_bits + m)) : 0;
  if (std::isnan(v)) return NanBits(f, std::signbit(v));
  double a = std::fabs(v);
  if (!f.has_sign && std::signbit(v) && a != 0) return NanBits(f, false);
  if (std::isinf(a)) {
    if (f.has_inf) return sign | (((1u << f.exponent_bits) - 1) << m);
    return NanBits(f, negative);
  }
  if (a == 0) {
    if (f.nan == Nan::kNegZero || (m == 0 && !f.has_sign)) return 0;
    return sign;
  }
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  int exp;
  std::frexp(a, &exp);  // a = frac * 2^exp, frac in [0.5, 1)
  int e = exp - 1;      // a = 1.x * 2^e
  uint32_t exp_field;
  uint64_t mant_field;
  if (f.mantissa_bits == 0 && !f.has_sign) {
    // e8m0: powers of two only, no zero or subnormals.
    double scaled = a / std::ldexp(1.0, e);  // in [1, 2)
    if (scaled > 1.5 || (scaled == 1.5 && ((e + f.bias) & 1))) ++e;
    int field = e + f.bias;
    if (field < 0) return 0;
    if (field > MaxExponentField(f)) return NanBits(f, false);
    return static_cast<uint32_t>(field);
  }
  if (e < emin) {
    // Subnormal: units of 2^(emin - m).
    double q = std::nearbyint(std::ldexp(a, m - emin));
    mant_field = static_cast<uint64_t>(q);
    exp_field = 0;
    if (mant_field >= (1ull << m)) {  // rounded up into the normal range
      exp_field = 1;
      mant_field -= 1ull << m;
    }
  } else {
    double q = std::nearbyint(std::ldexp(a, m - e));  // in [2^m, 2^(m+1)]
    uint64_t qi = static_cast<uint64_t>(q);
    if (qi == (2ull << m)) {
      ++e;
      qi = 1ull << m;
    }
    exp_field = static_cast<uint32_t>(e + f.bias);
    mant_field = qi - (1ull << m);
  }
  if (static_cast<int>(exp_field) > MaxExponentField(f) ||
      (static_cast<int>(exp_field) == MaxExponentField(f) && mant_field > MaxMantissaAtTop(f))) {
    if (f.has_inf) return sign | (((1u << f.exponent_bits) - 1) << m);
    return NanBits(f, negative);
  }
  return sign | (exp_field << m) | static_cast<uint32_t>(mant_field);
}

double DecodeNarrowFloat(const FloatFormat& f, uint32_t bits) {
  const int m = f.mantissa_bits;
  const int eb = f.exponent_bits;
  const uint32_t mant = bits & ((1u << m) - 1);
  const uint32_t exp_field = (bits >> m) & ((1u << eb) - 1);
  const bool negative = f.has_sign && ((bits >> (eb + m)) & 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nan) {
    case Nan::kIeee:
      if (exp_field == (1u << eb) - 1) {
        if (mant != 0) return negative ? -nan : nan;
        return negative ? -INFINITY : INFINITY;
      }
      break;
    case Nan::kAllOnes:
      if (exp_field == (1u << eb) - 1 && mant == (1u << m) - 1) return nan;
      break;
    case Nan::kNegZero:
      if (negative && exp_field == 0 && mant == 0) return nan;
      break;
    case Nan::kNone:
      break;
  }
  double value;
  if (m == 0 && !f.has_sign) {
    value = std::ldexp(1.0, static_cast<int>(exp_field) - f.bias);
  } else if (exp_field == 0) {
    value = std::ldexp(static_cast<double>(mant), 1 - f.bias - m);
  } else {
    value = std::ldexp(static_cast<double>(mant + (1u << m)),
                       static_cast<int>(exp_field) - f.bias - m);
  }
  return negative ? -value : value;
}

uint16_t FloatToBFloat16(float v) {
  uint32_t bits = std::bit_cast<uint32_t>(v);
  if (std::isnan(v)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float BFloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t FloatToHalf(float v) {
  return static_cast<uint16_t>(EncodeNarrowFloat(kF16, static_cast<double>(v)));
}

float HalfToFloat(uint16_t bits) {
  return static_cast<float>(DecodeNarrowFloat(kF16, bits));
}

}  // namespace kiln::hlo
