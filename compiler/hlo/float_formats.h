// Narrow floating-point formats (f16, bf16, the f8 family, f4e2m1fn):
// encoding from and decoding to double with round-to-nearest-even.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "compiler/hlo/primitive_type.h"

namespace kiln::hlo {

struct FloatFormat {
  int total_bits;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign;
  bool has_inf;
  enum class Nan : uint8_t {
    kIeee,     // exponent all ones, mantissa non-zero
    kAllOnes,  // only the all-ones exponent and mantissa ("fn" types)
    kNegZero,  // the bit pattern of -0 ("fnuz" types); no -0
    kNone,     // no NaN (f4e2m1fn)
  } nan;
};

// The format of a narrow float type (f16, bf16, f8*, f4e2m1fn); nullptr for
// any other type.
const FloatFormat* NarrowFloatFormat(PrimitiveType t);

// Rounds v to the nearest value of the format (ties to even). Values beyond
// the largest finite one become inf where the format has it, NaN otherwise.
uint32_t EncodeNarrowFloat(const FloatFormat& f, double v);
double DecodeNarrowFloat(const FloatFormat& f, uint32_t bits);
// Largest finite value of the format.
double MaxFiniteNarrowFloat(const FloatFormat& f);

// Fast paths for the two 16-bit types (ties to even, NaN stays NaN).
uint16_t FloatToBFloat16(float v);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToHalf(float v);
float HalfToFloat(uint16_t bits);

}  // namespace kiln::hlo
