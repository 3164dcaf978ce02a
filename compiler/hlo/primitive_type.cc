#include "compiler/hlo/primitive_type.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "base/edit_distance.h"
#include "compiler/hlo/name_table.h"

namespace kiln::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array kTypes = {
#define KILN_PT_INFO(e, name, bits) TypeInfo{PrimitiveType::e, name, bits},
    KILN_PRIMITIVE_TYPES(KILN_PT_INFO)
#undef KILN_PT_INFO
};

const TypeInfo* Find(PrimitiveType t) {
  size_t i = static_cast<size_t>(t);
  if (i == 0 || i > kTypes.size()) return nullptr;
  return &kTypes[i - 1];
}

}  // namespace

std::string UnknownElementTypeMessage(std::string_view name) {
  // Words longer than any type name are not compared letter by letter.
  constexpr size_t kLongestName = 16;
  std::string message = "unknown element type '" + std::string(name.substr(0, 64)) + "'";
  // Near misses only (f33, bf61, s3w); among equally near ones, a name of
  // the same length (s31 suggests s32, not s1).
  std::string_view nearest;
  auto rank = [&](std::string_view candidate) {
    const size_t length_gap = candidate.size() > name.size() ? candidate.size() - name.size()
                                                              : name.size() - candidate.size();
    return std::pair(EditDistance(name, candidate), length_gap);
  };
  if (name.size() <= kLongestName) {
    for (const TypeInfo& info : kTypes) {
      const auto [distance, gap] = rank(info.name);
      if (distance > 2 || distance >= info.name.size()) continue;
      if (nearest.empty() || std::pair(distance, gap) < rank(nearest)) nearest = info.name;
    }
  }
  if (!nearest.empty()) message += " (did you mean " + std::string(nearest) + "?)";
  message += "; element types are";
  for (size_t i = 0; i < kTypes.size(); ++i) {
    message += (i == 0 ? " " : ", ");
    message += kTypes[i].name;
  }
  return message;
}

std::string_view PrimitiveTypeName(PrimitiveType t) {
  if (t == PrimitiveType::kTuple) return "tuple";
  if (t == PrimitiveType::kBuffer) return "buffer";
  const TypeInfo* info = Find(t);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  // Called for every shape and every word that might start one.
  static const NameTable<const TypeInfo> by_name = [] {
    NameTable<const TypeInfo> table;
    for (const TypeInfo& info : kTypes) table.Insert(info.name, &info);
    return table;
  }();
  const TypeInfo* info = by_name.Find(name);
  if (info == nullptr) return std::nullopt;
  return info->type;
}

int BitWidth(PrimitiveType t) {
  const TypeInfo* info = Find(t);
  return info ? info->bits : 0;
}

int HostByteWidth(PrimitiveType t) {
  int bits = BitWidth(t);
  return bits == 0 ? 0 : (bits + 7) / 8;
}

bool IsArrayType(PrimitiveType t) {
  return t != PrimitiveType::kInvalid && t != PrimitiveType::kTuple && t != PrimitiveType::kBuffer &&
         t != PrimitiveType::kToken && t != PrimitiveType::kOpaque;
}

bool IsFloatingPoint(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64: case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}

bool IsComplex(PrimitiveType t) {
  return t == PrimitiveType::kC64 || t == PrimitiveType::kC128;
}

bool IsSignedInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4:
    case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::hlo
