#include "compiler/stablehlo/mlir_types_text.h"

#include <array>
#include <utility>

namespace kiln::stablehlo {
namespace {

using hlo::PrimitiveType;

struct NamedType {
  std::string_view name;
  PrimitiveType type;
};

// Names MLIR writes for the element types HLO has (the first of a type is
// the one printed).
constexpr std::array<NamedType, 36> kNames = {{
    {"i1", PrimitiveType::kPred},          {"i2", PrimitiveType::kS2},
    {"i4", PrimitiveType::kS4},            {"i8", PrimitiveType::kS8},
    {"i16", PrimitiveType::kS16},          {"i32", PrimitiveType::kS32},
    {"i64", PrimitiveType::kS64},          {"si2", PrimitiveType::kS2},
    {"si4", PrimitiveType::kS4},           {"si8", PrimitiveType::kS8},
    {"si16", PrimitiveType::kS16},         {"si32", PrimitiveType::kS32},
    {"si64", PrimitiveType::kS64},         {"ui1", PrimitiveType::kU1},
    {"ui2", PrimitiveType::kU2},           {"ui4", PrimitiveType::kU4},
    {"ui8", PrimitiveType::kU8},           {"ui16", PrimitiveType::kU16},
    {"ui32", PrimitiveType::kU32},         {"ui64", PrimitiveType::kU64},
    {"f16", PrimitiveType::kF16},          {"bf16", PrimitiveType::kBF16},
    {"f32", PrimitiveType::kF32},          {"f64", PrimitiveType::kF64},
    {"f8E5M2", PrimitiveType::kF8E5M2},    {"f8E4M3", PrimitiveType::kF8E4M3},
    {"f8E4M3FN", PrimitiveType::kF8E4M3FN}, {"f8E4M3B11FNUZ", PrimitiveType::kF8E4M3B11FNUZ},
    {"f8E3M4", PrimitiveType::kF8E3M4},    {"f8E5M2FNUZ", PrimitiveType::kF8E5M2FNUZ},
    {"f8E4M3FNUZ", PrimitiveType::kF8E4M3FNUZ}, {"f4E2M1FN", PrimitiveType::kF4E2M1FN},
    {"f8E8M0FNU", PrimitiveType::kF8E8M0FNU}, {"index", PrimitiveType::kS64},
    {"si1", PrimitiveType::kPred},         {"i1", PrimitiveType::kPred},
}};

void AppendShape(const TypeInfo& t, std::string& out) {
  if (t.unranked) {
    out += "*x";
    return;
  }
  for (int64_t d : t.dims) {
    if (d == kDynamic) {
      out += "?";
    } else {
      out += std::to_string(d);
    }
    out += "x";
  }
}

void AppendElement(const TypeTable& types, const TypeInfo& t, std::string& out) {
  if (t.quant >= 0) {
    const QuantInfo& q = types.quant(t.quant);
    out += "!quant.uniform<" + MlirElementName(q.storage) + ":" + MlirElementName(q.expressed);
    if (q.axis >= 0) out += ":" + std::to_string(q.axis);
    out += ", ";
    if (q.axis >= 0) out += "{";
    for (size_t i = 0; i < q.scales.size(); ++i) {
      if (i > 0) out += ",";
      out += std::to_string(q.scales[i]);
      if (i < q.zero_points.size()) out += ":" + std::to_string(q.zero_points[i]);
    }
    if (q.axis >= 0) out += "}";
    out += ">";
    return;
  }
  if (!t.unsupported_element.empty()) {
    out += t.unsupported_element;
    return;
  }
  out += t.is_index ? std::string("index") : MlirElementName(t.element);
}

}  // namespace

std::optional<PrimitiveType> ElementTypeFromMlirName(std::string_view name) {
  for (const NamedType& n : kNames) {
    if (n.name == name) return n.type;
  }
  return std::nullopt;
}

bool IsUnsupportedMlirElementName(std::string_view name) {
  return name == "f6E2M3FN" || name == "f6E3M2FN" || name == "tf32" || name == "f80" || name == "f128";
}

std::string MlirElementName(PrimitiveType type) {
  if (type == PrimitiveType::kC64) return "complex<f32>";
  if (type == PrimitiveType::kC128) return "complex<f64>";
  for (const NamedType& n : kNames) {
    if (n.type == type) return std::string(n.name);
  }
  return std::string(hlo::PrimitiveTypeName(type));
}

void AppendTypeText(const TypeTable& types, TypeId id, std::string& out) {
  if (id >= types.size()) {
    out += "<no type>";
    return;
  }
  const TypeInfo& t = types[id];
  switch (t.kind) {
    case TypeKind::kTensor:
      out += "tensor<";
      AppendShape(t, out);
      AppendElement(types, t, out);
      out += ">";
      return;
    case TypeKind::kScalar:
      AppendElement(types, t, out);
      return;
    case TypeKind::kToken:
      out += "!stablehlo.token";
      return;
    case TypeKind::kNone:
      out += "none";
      return;
    case TypeKind::kBuffer:
      out += "memref<";
      if (!t.members.empty()) {
        AppendShape(types[t.members[0]], out);
        AppendElement(types, types[t.members[0]], out);
      }
      out += ">";
      return;
    case TypeKind::kOpaque:
      out += t.unsupported_element;
      return;
    case TypeKind::kTuple:
      out += "tuple<";
      for (size_t i = 0; i < t.members.size(); ++i) {
        if (i > 0) out += ", ";
        AppendTypeText(types, t.members[i], out);
      }
      out += ">";
      return;
    case TypeKind::kFunction:
      out += "(";
      for (size_t i = 0; i < t.members.size(); ++i) {
        if (i > 0) out += ", ";
        AppendTypeText(types, t.members[i], out);
      }
      out += ") -> (";
      for (size_t i = 0; i < t.results.size(); ++i) {
        if (i > 0) out += ", ";
        AppendTypeText(types, t.results[i], out);
      }
      out += ")";
      return;
  }
}

}  // namespace kiln::stablehlo
