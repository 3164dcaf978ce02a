#include "compiler/stablehlo/dense_elements.h"

#include <cmath>
#include <cstring>

#include "compiler/hlo/float_formats.h"

namespace kiln::stablehlo {
namespace {

using hlo::PrimitiveType;

// Sign-extends the low `bits` of a byte (s2, s4 are stored one a byte).
uint8_t ExtendSubByte(uint8_t byte, PrimitiveType t) {
  const int bits = hlo::BitWidth(t);
  if (bits >= 8) return byte;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  uint8_t v = byte & mask;
  if (hlo::IsSignedInteger(t) && (v & (1u << (bits - 1)))) v |= static_cast<uint8_t>(~mask);
  return v;
}

void StoreFloat(hlo::Literal& lit, int64_t i, PrimitiveType t, double v) {
  switch (t) {
    case PrimitiveType::kF64: lit.Set<double>(i, v); return;
    case PrimitiveType::kF32: lit.Set<float>(i, static_cast<float>(v)); return;
    case PrimitiveType::kF16: lit.Set<uint16_t>(i, hlo::FloatToHalf(static_cast<float>(v))); return;
    case PrimitiveType::kBF16: {
      // Through float rounds twice; bf16 from double directly.
      const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t);
      lit.Set<uint16_t>(i, static_cast<uint16_t>(hlo::EncodeNarrowFloat(*f, v)));
      return;
    }
    default: {
      const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t);
      if (f != nullptr) lit.Set<uint8_t>(i, static_cast<uint8_t>(hlo::EncodeNarrowFloat(*f, v)));
      return;
    }
  }
}

}  // namespace

int RawElementBytes(PrimitiveType type) { return hlo::HostByteWidth(type); }

Result<hlo::Literal> LiteralFromRawBytes(const hlo::Shape& shape, std::span<const uint8_t> bytes, bool* splat) {
  const PrimitiveType t = shape.element_type();
  const int64_t count = shape.ElementCount();
  const int w = RawElementBytes(t);
  if (count < 0 || w <= 0) return InvalidArgumentError("bad constant shape " + shape.ToString());
  *splat = false;
  auto convert = [&](hlo::Literal& lit, int64_t n, std::span<const uint8_t> src) {
    if (n == 0) return;  // an empty tensor: no data to copy (and maybe no buffer)
    uint8_t* dst = lit.mutable_data().data();
    if (t == PrimitiveType::kPred) {
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i] != 0 ? 1 : 0;
    } else if (hlo::BitWidth(t) < 8 && hlo::IsInteger(t)) {
      for (int64_t i = 0; i < n; ++i) dst[i] = ExtendSubByte(src[i], t);
    } else {
      std::memcpy(dst, src.data(), static_cast<size_t>(n) * w);
    }
  };
  const uint64_t full = static_cast<uint64_t>(count) * static_cast<uint64_t>(w);
  if (t == PrimitiveType::kPred && bytes.size() == 1 && count > 1 && bytes[0] != 0 && bytes[0] != 1 &&
      bytes[0] != 0xFF) {
    // Packed bits of up to eight elements.
  } else if (bytes.size() == full) {
    hlo::Literal lit = hlo::Literal::Uninitialized(shape);
    convert(lit, count, bytes);
    return lit;
  } else if (bytes.size() == static_cast<size_t>(w)) {
    hlo::Literal lit = hlo::Literal::Uninitialized(hlo::Shape(t, {}));
    convert(lit, 1, bytes);
    *splat = true;
    return lit;
  }
  if (t == PrimitiveType::kPred && bytes.size() == static_cast<size_t>((count + 7) / 8)) {
    hlo::Literal lit = hlo::Literal::Uninitialized(shape);
    uint8_t* dst = lit.mutable_data().data();
    for (int64_t i = 0; i < count; ++i) dst[i] = (bytes[static_cast<size_t>(i / 8)] >> (i % 8)) & 1;
    return lit;
  }
  return InvalidArgumentError("constant data holds " + std::to_string(bytes.size()) + " bytes; " +
                              shape.ToString() + " needs " + std::to_string(full) + " (or " +
                              std::to_string(w) + " for a splat)");
}

Status SetLiteralElement(hlo::Literal& lit, int64_t i, const WrittenValue& v) {
  const PrimitiveType t = lit.shape().element_type();
  if (hlo::IsComplex(t)) {
    // Each part is a float, an integer, or (hex) the part's bits.
    auto part = [&](int64_t j, bool is_float, bool is_bits, double f, uint64_t u) {
      if (t == PrimitiveType::kC64) {
        if (is_bits) {
          lit.Set<uint32_t>(j, static_cast<uint32_t>(u));
        } else {
          lit.Set<float>(j, static_cast<float>(is_float ? f : static_cast<double>(static_cast<int64_t>(u))));
        }
      } else if (is_bits) {
        lit.Set<uint64_t>(j, u);
      } else {
        lit.Set<double>(j, is_float ? f : static_cast<double>(static_cast<int64_t>(u)));
      }
    };
    part(2 * i, v.is_float, v.is_bits, v.f, v.u);
    part(2 * i + 1, v.im_is_float, v.im_is_bits, v.im, v.im_u);
    return Ok();
  }
  if (hlo::IsFloatingPoint(t)) {
    if (v.is_bits) {
      const int bits = hlo::BitWidth(t);
      switch (bits) {
        case 64: lit.Set<uint64_t>(i, v.u); break;
        case 32: lit.Set<uint32_t>(i, static_cast<uint32_t>(v.u)); break;
        case 16: lit.Set<uint16_t>(i, static_cast<uint16_t>(v.u)); break;
        default: lit.Set<uint8_t>(i, static_cast<uint8_t>(v.u)); break;
      }
      return Ok();
    }
    StoreFloat(lit, i, t, v.is_float ? v.f : static_cast<double>(static_cast<int64_t>(v.u)));
    return Ok();
  }
  if (v.is_float) return InvalidArgumentError("a float value for an integer constant");
  const int bytes = hlo::HostByteWidth(t);
  uint64_t u = v.u;
  if (t == PrimitiveType::kPred) u = u != 0 ? 1 : 0;
  if (hlo::BitWidth(t) < 8 && hlo::IsInteger(t)) u = ExtendSubByte(static_cast<uint8_t>(u), t);
  std::memcpy(lit.mutable_data().data() + i * bytes, &u, static_cast<size_t>(bytes));
  return Ok();
}

}  // namespace kiln::stablehlo
