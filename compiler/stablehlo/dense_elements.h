// Element values of dense constants, shared by the text and bytecode
// readers: raw element bytes as MLIR stores them (DenseIntOrFPElementsAttr's
// raw data: ceil(bits/8) little-endian bytes per element, complex as
// (re, im), i1 one byte per element or packed bits, one element alone for
// a splat) into HLO literals, and single written values into literal
// elements.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "compiler/hlo/literal.h"

namespace kiln::stablehlo {

// The literal of `shape` (an array shape with a valid element count) held
// by `bytes`. A buffer of one element is a splat: the result is then a
// rank-0 literal and *splat is set. Fails naming the sizes when `bytes`
// fits neither.
Result<hlo::Literal> LiteralFromRawBytes(const hlo::Shape& shape, std::span<const uint8_t> bytes,
                                         bool* splat);

// A value as written in a constant: a float (with an imaginary part for
// complex), or an integer's two's complement bits; a hex integer written
// for a float element gives the element's bits.
struct WrittenValue {
  bool is_float = false;
  bool is_bits = false;
  double f = 0;
  uint64_t u = 0;
  // The imaginary part of a complex value, written the same ways.
  bool im_is_float = false;
  bool im_is_bits = false;
  double im = 0;
  uint64_t im_u = 0;
};

// Stores `v` as element `i` of `lit`, converted to its element type (floats
// rounded to nearest even; integers wrapped to the type's width). Fails on a
// float written for an integer type.
Status SetLiteralElement(hlo::Literal& lit, int64_t i, const WrittenValue& v);

// Byte width of one element in MLIR raw data (sub-byte integers: 1).
int RawElementBytes(hlo::PrimitiveType type);

}  // namespace kiln::stablehlo
