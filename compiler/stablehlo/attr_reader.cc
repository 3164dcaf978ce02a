// Reading op attributes for the converter (converter.h): the forms the text
// and bytecode readers keep them in (array<i64: ...>, dense<...>, [...],
// #stablehlo<enum V>, #stablehlo.struct<...>).
#include <cstring>

#include "compiler/stablehlo/converter.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::PrimitiveType;

int64_t LiteralInt(const hlo::Literal& lit, int64_t i) {
  const PrimitiveType t = lit.shape().element_type();
  const int w = hlo::HostByteWidth(t);
  const uint8_t* p = lit.data().data() + i * w;
  switch (w) {
    case 1: return hlo::IsUnsignedInteger(t) || t == PrimitiveType::kPred ? *p : static_cast<int8_t>(*p);
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return hlo::IsUnsignedInteger(t) ? v : static_cast<int16_t>(v);
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return hlo::IsUnsignedInteger(t) ? v : static_cast<int32_t>(v);
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

}  // namespace

Result<const Attr*> RequiredAttr(const Converter& c, const Operation& op, std::string_view name) {
  const Attr* a = op.FindAttr(name);
  if (a == nullptr) return c.OpError(op, "missing attribute " + std::string(name));
  return a;
}

std::vector<int64_t> IntListOf(const TypeTable& types, const Attr* a) {
  std::vector<int64_t> out;
  if (a == nullptr) return out;
  switch (a->kind) {
    case Attr::Kind::kDenseArray:
      return a->ints;
    case Attr::Kind::kInt:
      out.push_back(a->i);
      return out;
    case Attr::Kind::kBool:
      out.push_back(a->b ? 1 : 0);
      return out;
    case Attr::Kind::kArray:
      for (const Attr* item : a->items) {
        std::vector<int64_t> inner = IntListOf(types, item);
        out.insert(out.end(), inner.begin(), inner.end());
      }
      return out;
    case Attr::Kind::kDense: {
      const hlo::Literal& lit = *a->literal;
      const PrimitiveType t = lit.shape().element_type();
      if (!hlo::IsInteger(t) && t != PrimitiveType::kPred) return out;
      int64_t count = 1;
      if (a->type != kNoType) {
        for (int64_t d : types[a->type].dims) count *= d;
      }
      if (count > (int64_t{1} << 24)) return out;
      for (int64_t i = 0; i < count; ++i) out.push_back(LiteralInt(lit, a->splat ? 0 : i));
      return out;
    }
    default:
      return out;
  }
}

Result<std::vector<int64_t>> IntListAttr(const Converter& c, const Operation& op, std::string_view name,
                                         bool required) {
  const Attr* a = op.FindAttr(name);
  if (a == nullptr) {
    if (required) return c.OpError(op, "missing attribute " + std::string(name));
    return std::vector<int64_t>{};
  }
  if (a->kind != Attr::Kind::kDenseArray && a->kind != Attr::Kind::kInt && a->kind != Attr::Kind::kArray &&
      a->kind != Attr::Kind::kDense && a->kind != Attr::Kind::kBool) {
    return c.OpError(op, "attribute " + std::string(name) + " is not a list of integers");
  }
  return IntListOf(c.types(), a);
}

Result<int64_t> IntAttrValue(const Converter& c, const Operation& op, std::string_view name,
                             std::optional<int64_t> fallback) {
  const Attr* a = op.FindAttr(name);
  if (a == nullptr) {
    if (fallback) return *fallback;
    return c.OpError(op, "missing attribute " + std::string(name));
  }
  std::vector<int64_t> v = IntListOf(c.types(), a);
  if (v.size() != 1) return c.OpError(op, "attribute " + std::string(name) + " is not an integer");
  return v[0];
}

bool BoolAttrValue(const Operation& op, std::string_view name, bool fallback) {
  const Attr* a = op.FindAttr(name);
  if (a == nullptr) return fallback;
  if (a->kind == Attr::Kind::kBool) return a->b;
  if (a->kind == Attr::Kind::kInt) return a->i != 0;
  if (a->kind == Attr::Kind::kUnit) return true;
  return fallback;
}

std::string_view EnumValueOf(const Attr* a) {
  if (a == nullptr) return {};
  if (a->kind == Attr::Kind::kEnum || a->kind == Attr::Kind::kString) return a->text;
  if (a->kind == Attr::Kind::kStruct && a->fields.size() == 1) return EnumValueOf(a->fields[0].value);
  return {};
}

std::string_view EnumAttrValue(const Operation& op, std::string_view name) { return EnumValueOf(op.FindAttr(name)); }

const Attr* StructField(const Operation& op, std::string_view struct_name, std::string_view field) {
  const Attr* s = op.FindAttr(struct_name);
  if (s != nullptr && s->kind == Attr::Kind::kStruct) {
    if (const Attr* f = s->Field(field)) return f;
    return nullptr;
  }
  return op.FindAttr(field);
}

}  // namespace kiln::stablehlo::convert_internal
