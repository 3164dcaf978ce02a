// Element types of HLO shapes, as spelled in HLO text.
//
// Pure functions over an enum; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::hlo {

// X(enum, text name, bits per element)
#define KILN_PRIMITIVE_TYPES(X)            \
  X(kPred, "pred", 8)                      \
  X(kS1, "s1", 1)                          \
  X(kS2, "s2", 2)                          \
  X(kS4, "s4", 4)                          \
  X(kS8, "s8", 8)                          \
  X(kS16, "s16", 16)                       \
  X(kS32, "s32", 32)                       \
  X(kS64, "s64", 64)                       \
  X(kU1, "u1", 1)                          \
  X(kU2, "u2", 2)                          \
  X(kU4, "u4", 4)                          \
  X(kU8, "u8", 8)                          \
  X(kU16, "u16", 16)                       \
  X(kU32, "u32", 32)                       \
  X(kU64, "u64", 64)                       \
  X(kF16, "f16", 16)                       \
  X(kBF16, "bf16", 16)                     \
  X(kF32, "f32", 32)                       \
  X(kF64, "f64", 64)                       \
  X(kF8E5M2, "f8e5m2", 8)                  \
  X(kF8E4M3, "f8e4m3", 8)                  \
  X(kF8E4M3FN, "f8e4m3fn", 8)              \
  X(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8)    \
  X(kF8E3M4, "f8e3m4", 8)                  \
  X(kF8E5M2FNUZ, "f8e5m2fnuz", 8)          \
  X(kF8E4M3FNUZ, "f8e4m3fnuz", 8)          \
  X(kF4E2M1FN, "f4e2m1fn", 4)              \
  X(kF8E8M0FNU, "f8e8m0fnu", 8)            \
  X(kC64, "c64", 64)                       \
  X(kC128, "c128", 128)                    \
  X(kToken, "token", 0)                    \
  X(kOpaque, "opaque", 0)

enum class PrimitiveType : uint8_t {
  kInvalid = 0,
#define KILN_PT_ENUM(e, name, bits) e,
  KILN_PRIMITIVE_TYPES(KILN_PT_ENUM)
#undef KILN_PT_ENUM
  kTuple,
  kBuffer,  // b(shape): a buffer holding an array
};

std::string_view PrimitiveTypeName(PrimitiveType t);
// Parses "f32", "bf16", ...; nullopt for anything else (including "tuple").
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
// What to say about a word written where an element type belongs:
// "unknown element type 'f33' (did you mean f32?); element types are pred,
// s1, ...". The nearest type is suggested when it is a near miss.
std::string UnknownElementTypeMessage(std::string_view name);

// Bits of one element as XLA stores it unpacked (sub-byte types: their width).
int BitWidth(PrimitiveType t);
// Bytes one element occupies in host memory (sub-byte types take one byte).
int HostByteWidth(PrimitiveType t);

bool IsArrayType(PrimitiveType t);  // not token/opaque/tuple/invalid
bool IsFloatingPoint(PrimitiveType t);
bool IsComplex(PrimitiveType t);
bool IsSignedInteger(PrimitiveType t);
bool IsUnsignedInteger(PrimitiveType t);
inline bool IsInteger(PrimitiveType t) { return IsSignedInteger(t) || IsUnsignedInteger(t); }

}  // namespace kiln::hlo
