// Attributes of the bytecode's table: VHLO's encodings
// (stablehlo/dialect/VhloBytecode.cpp's codes) and the builtin dialect's,
// decoded into the forms the text reader gives (bytecode_internal.h). A
// code this reader does not know becomes an opaque attribute, so that only
// the ops using it fail to convert. Types are bytecode_types.cc's.
#include <bit>
#include <cstring>
#include <limits>

#include "compiler/hlo/float_formats.h"
#include "compiler/stablehlo/bytecode_internal.h"
#include "compiler/stablehlo/dense_elements.h"
#include "compiler/stablehlo/mlir_types_text.h"

namespace kiln::stablehlo::bytecode {
namespace {

using hlo::PrimitiveType;

enum VhloAttrCode : uint64_t {
  kArrayAttr = 1,
  kBoolAttr = 2,
  kComparisonDirectionAttr = 3,
  kComparisonTypeAttr = 4,
  kCustomCallApiVersionAttr = 5,
  kDictionaryAttr = 6,
  kFftTypeAttr = 7,
  kFloatAttr = 8,
  kIntegerAttr = 9,
  kOutputOperandAliasAttr = 10,
  kPrecisionAttr = 11,
  kRngAlgorithmAttr = 12,
  kRngDistributionAttr = 13,
  kStringAttr = 14,
  kTensorAttr = 15,
  kTransposeAttr = 16,
  kTypeAttr = 17,
  kTypeExtensionsAttr = 18,
  kResultAccuracyModeAttr = 19,
  kResultAccuracyAttr = 20,
};

struct EnumNames {
  std::string_view mnemonic;
  std::vector<std::string_view> values;
};

const EnumNames* VhloEnum(uint64_t code) {
  static const EnumNames kDirection{"comparison_direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}};
  static const EnumNames kType{"comparison_type", {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}};
  static const EnumNames kFft{"fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}};
  static const EnumNames kPrecision{"precision", {"DEFAULT", "HIGH", "HIGHEST"}};
  static const EnumNames kRngAlgorithm{"rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX"}};
  static const EnumNames kRngDistribution{"rng_distribution", {"", "UNIFORM", "NORMAL"}};
  static const EnumNames kTranspose{"transpose", {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}};
  static const EnumNames kAccuracyMode{"result_accuracy_mode", {"DEFAULT", "HIGHEST", "TOLERANCE"}};
  switch (code) {
    case kComparisonDirectionAttr: return &kDirection;
    case kComparisonTypeAttr: return &kType;
    case kFftTypeAttr: return &kFft;
    case kPrecisionAttr: return &kPrecision;
    case kRngAlgorithmAttr: return &kRngAlgorithm;
    case kRngDistributionAttr: return &kRngDistribution;
    case kTransposeAttr: return &kTranspose;
    case kResultAccuracyModeAttr: return &kAccuracyMode;
    default: return nullptr;
  }
}

// A float of type `t` from its bits.
double FloatFromBits(PrimitiveType t, uint64_t bits) {
  if (t == PrimitiveType::kF64) return std::bit_cast<double>(bits);
  if (t == PrimitiveType::kF32) return std::bit_cast<float>(static_cast<uint32_t>(bits));
  if (const hlo::FloatFormat* f = hlo::NarrowFloatFormat(t)) {
    return hlo::DecodeNarrowFloat(*f, static_cast<uint32_t>(bits));
  }
  return 0;
}

}  // namespace

Result<const Attr*> Reader::AttrAt(uint64_t index) {
  if (index >= attr_entries_.size()) {
    return Fail("attribute " + std::to_string(index) + " of " + std::to_string(attr_entries_.size()) +
                " does not exist");
  }
  if (attr_state_[index] == 2) return attrs_[index];
  if (attr_state_[index] == 1) return Fail("attribute " + std::to_string(index) + " refers to itself");
  if (depth > kMaxDecodeDepth) return Fail("attributes nest too deeply");
  attr_state_[index] = 1;
  ++depth;
  Result<const Attr*> a = DecodeAttr(attr_entries_[index]);
  --depth;
  if (!a) return a;
  attrs_[index] = *a;
  attr_state_[index] = 2;
  return *a;
}

Result<const Attr*> Reader::DecodeAttr(const TableEntry& e) {
  ByteStream s(input_, e.begin, e.end, "attribute");
  const std::string_view dialect = dialects_[e.dialect];
  if (e.custom && dialect == "vhlo") return DecodeVhloAttr(s);
  if (e.custom && dialect == "builtin") return DecodeBuiltinAttr(s);
  // The assembly format, or another dialect's encoding: kept as text.
  Attr* a = module_.NewAttr(Attr::Kind::kOpaque);
  a->dialect_name = dialect;
  if (!e.custom) {
    KILN_ASSIGN_OR_RETURN(std::string_view text, s.CString());
    a->text = text;
  } else {
    a->text = "#" + std::string(dialect) + ".<encoded>";
  }
  return a;
}

Result<const Attr*> Reader::DecodeTensorAttr(ByteStream& s) {
  KILN_ASSIGN_OR_RETURN(TypeId type, ReadTypeRef(s));
  KILN_ASSIGN_OR_RETURN(uint64_t size, s.VarInt());
  KILN_ASSIGN_OR_RETURN(std::string_view blob, s.Bytes(size));
  const TypeInfo& t = module_.types()[type];
  if (t.kind != TypeKind::kTensor || t.unranked || !t.unsupported_element.empty()) {
    Attr* opaque = module_.NewAttr(Attr::Kind::kOpaque);
    opaque->text = "#vhlo.tensor_v1<...>";
    return opaque;
  }
  hlo::Shape shape(t.element, t.dims);
  for (int64_t d : t.dims) {
    if (d < 0) return s.Fail("a tensor attribute of dynamic shape");
  }
  const int64_t count = shape.ElementCount();
  if (count < 0) return s.Fail("a tensor attribute too large");
  std::vector<uint8_t> bytes(blob.begin(), blob.end());
  // i1 tensors are packed 8 to a byte (a splat as one all-ones or zero byte).
  if (t.element == PrimitiveType::kPred && count > 1 && bytes.size() == static_cast<size_t>((count + 7) / 8) &&
      bytes.size() != static_cast<size_t>(count)) {
    std::vector<uint8_t> unpacked(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) unpacked[i] = (bytes[i / 8] >> (i % 8)) & 1;
    bytes = std::move(unpacked);
  }
  bool splat = false;
  KILN_ASSIGN_OR_RETURN(hlo::Literal literal, LiteralFromRawBytes(shape, bytes, &splat));
  Attr* a = module_.NewAttr(Attr::Kind::kDense);
  a->type = type;
  a->splat = splat;
  a->literal = std::make_shared<const hlo::Literal>(std::move(literal));
  return a;
}

Result<const Attr*> Reader::DecodeArray(ByteStream& s) {
  Attr* a = module_.NewAttr(Attr::Kind::kArray);
  KILN_ASSIGN_OR_RETURN(uint64_t n, s.Count());
  for (uint64_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(const Attr* item, ReadAttrRef(s));
    a->items.push_back(item);
  }
  return a;
}

Result<const Attr*> Reader::DecodeDictionary(ByteStream& s) {
  Attr* a = module_.NewAttr(Attr::Kind::kDict);
  KILN_ASSIGN_OR_RETURN(uint64_t n, s.Count(2));
  for (uint64_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(const Attr* key, ReadAttrRef(s));
    KILN_ASSIGN_OR_RETURN(const Attr* value, ReadAttrRef(s));
    if (key->kind != Attr::Kind::kString) return s.Fail("a dictionary key is not a string");
    a->fields.push_back({module_.Intern(key->text), value});
  }
  return a;
}

Result<const Attr*> Reader::DecodeInteger(ByteStream& s, TypeId type) {
  const TypeInfo& t = module_.types()[type];
  const int width = t.is_index ? 64 : hlo::BitWidth(t.element);
  KILN_ASSIGN_OR_RETURN(uint64_t bits, ReadAPInt(s, width));
  int64_t v = static_cast<int64_t>(bits);
  if (width < 64 && hlo::IsSignedInteger(t.element)) {
    const int shift = 64 - width;
    v = static_cast<int64_t>(bits << shift) >> shift;
  }
  Attr* a = module_.NewAttr(Attr::Kind::kInt);
  a->type = type;
  a->i = v;
  return a;
}

Result<const Attr*> Reader::DecodeVhloAttr(ByteStream& s) {
  KILN_ASSIGN_OR_RETURN(uint64_t code, s.VarInt());
  TypeTable& types = module_.types();
  if (const EnumNames* names = VhloEnum(code)) {
    KILN_ASSIGN_OR_RETURN(uint64_t v, s.VarInt());
    if (v >= names->values.size() || names->values[v].empty()) {
      return s.Fail("value " + std::to_string(v) + " of enum " + std::string(names->mnemonic));
    }
    Attr* a = module_.NewAttr(Attr::Kind::kEnum);
    a->dialect_name = names->mnemonic;
    a->text = names->values[v];
    return a;
  }
  switch (code) {
    case kArrayAttr: return DecodeArray(s);
    case kBoolAttr: {
      KILN_ASSIGN_OR_RETURN(uint64_t v, s.VarInt());
      if (v > 1) return s.Fail("a boolean of value " + std::to_string(v));
      Attr* a = module_.NewAttr(Attr::Kind::kBool);
      a->b = v == 1;
      return a;
    }
    case kCustomCallApiVersionAttr: {
      KILN_ASSIGN_OR_RETURN(uint64_t v, s.VarInt());
      if (v > 4) return s.Fail("custom call API version " + std::to_string(v));
      Attr* a = module_.NewAttr(Attr::Kind::kInt);
      a->i = static_cast<int64_t>(v);
      a->type = types.Scalar(PrimitiveType::kS32);
      return a;
    }
    case kDictionaryAttr: return DecodeDictionary(s);
    case kFloatAttr: {
      KILN_ASSIGN_OR_RETURN(TypeId type, ReadTypeRef(s));
      const PrimitiveType e = types[type].element;
      if (!hlo::IsFloatingPoint(e)) return s.Fail("a float attribute of a non-float type");
      KILN_ASSIGN_OR_RETURN(uint64_t bits, ReadAPInt(s, hlo::BitWidth(e)));
      Attr* a = module_.NewAttr(Attr::Kind::kFloat);
      a->type = type;
      a->f = FloatFromBits(e, bits);
      return a;
    }
    case kIntegerAttr: {
      KILN_ASSIGN_OR_RETURN(TypeId type, ReadTypeRef(s));
      const TypeInfo& t = types[type];
      const PrimitiveType e = t.element;
      if (!hlo::IsInteger(e) && e != PrimitiveType::kPred) return s.Fail("an integer attribute of a non-integer type");
      return DecodeInteger(s, type);
    }
    case kOutputOperandAliasAttr: {
      Attr* a = module_.NewAttr(Attr::Kind::kStruct);
      a->dialect_name = "stablehlo.output_operand_alias";
      auto int_list = [&]() -> Result<const Attr*> {
        Attr* list = module_.NewAttr(Attr::Kind::kArray);
        KILN_ASSIGN_OR_RETURN(uint64_t n, s.Count());
        for (uint64_t i = 0; i < n; ++i) {
          KILN_ASSIGN_OR_RETURN(int64_t v, s.SignedVarInt());
          Attr* item = module_.NewAttr(Attr::Kind::kInt);
          item->i = v;
          item->type = types.Scalar(PrimitiveType::kS64);
          list->items.push_back(item);
        }
        return list;
      };
      KILN_ASSIGN_OR_RETURN(const Attr* outputs, int_list());
      KILN_ASSIGN_OR_RETURN(int64_t operand, s.SignedVarInt());
      KILN_ASSIGN_OR_RETURN(const Attr* operand_indices, int_list());
      Attr* index = module_.NewAttr(Attr::Kind::kInt);
      index->i = operand;
      index->type = types.Scalar(PrimitiveType::kS64);
      a->fields = {{module_.Intern("output_tuple_indices"), outputs},
                   {module_.Intern("operand_index"), index},
                   {module_.Intern("operand_tuple_indices"), operand_indices}};
      return a;
    }
    case kStringAttr: {
      KILN_ASSIGN_OR_RETURN(uint64_t i, s.VarInt());
      KILN_ASSIGN_OR_RETURN(std::string_view text, String(i));
      Attr* a = module_.NewAttr(Attr::Kind::kString);
      a->text = text;
      return a;
    }
    case kTensorAttr: return DecodeTensorAttr(s);
    case kTypeAttr: {
      Attr* a = module_.NewAttr(Attr::Kind::kType);
      KILN_ASSIGN_OR_RETURN(a->type, ReadTypeRef(s));
      return a;
    }
    case kTypeExtensionsAttr: {
      Attr* a = module_.NewAttr(Attr::Kind::kStruct);
      a->dialect_name = "stablehlo.type_extensions";
      Attr* bounds = module_.NewAttr(Attr::Kind::kArray);
      KILN_ASSIGN_OR_RETURN(uint64_t n, s.Count());
      for (uint64_t i = 0; i < n; ++i) {
        KILN_ASSIGN_OR_RETURN(int64_t v, s.SignedVarInt());
        Attr* item = module_.NewAttr(Attr::Kind::kInt);
        item->i = v < 0 ? kDynamic : v;
        bounds->items.push_back(item);
      }
      a->fields = {{module_.Intern("bounds"), bounds}};
      return a;
    }
    case kResultAccuracyAttr: {
      KILN_ASSIGN_OR_RETURN(uint64_t atol, ReadAPInt(s, 64));
      KILN_ASSIGN_OR_RETURN(uint64_t rtol, ReadAPInt(s, 64));
      KILN_ASSIGN_OR_RETURN(int64_t ulps, s.SignedVarInt());
      KILN_ASSIGN_OR_RETURN(const Attr* mode, ReadAttrRef(s));
      auto f64 = [&](uint64_t bits) {
        Attr* f = module_.NewAttr(Attr::Kind::kFloat);
        f->f = std::bit_cast<double>(bits);
        f->type = types.Scalar(PrimitiveType::kF64);
        return f;
      };
      Attr* u = module_.NewAttr(Attr::Kind::kInt);
      u->i = ulps;
      Attr* a = module_.NewAttr(Attr::Kind::kStruct);
      a->dialect_name = "stablehlo.result_accuracy";
      a->fields = {{module_.Intern("atol"), f64(atol)},
                   {module_.Intern("rtol"), f64(rtol)},
                   {module_.Intern("ulps"), u},
                   {module_.Intern("mode"), mode}};
      return a;
    }
    default: {
      Attr* a = module_.NewAttr(Attr::Kind::kOpaque);
      a->dialect_name = "vhlo";
      a->text = "#vhlo.attribute_code_" + std::to_string(code);
      return a;
    }
  }
}

Result<const Attr*> Reader::DecodeBuiltinAttr(ByteStream& s) {
  KILN_ASSIGN_OR_RETURN(uint64_t code, s.VarInt());
  switch (code) {
    case 0: return DecodeArray(s);       // ArrayAttr
    case 1: return DecodeDictionary(s);  // DictionaryAttr
    case 2:    // StringAttr
    case 3: {  // StringAttr with a type
      KILN_ASSIGN_OR_RETURN(uint64_t i, s.VarInt());
      KILN_ASSIGN_OR_RETURN(std::string_view text, String(i));
      Attr* a = module_.NewAttr(Attr::Kind::kString);
      a->text = text;
      return a;
    }
    case 4: {  // FlatSymbolRefAttr
      KILN_ASSIGN_OR_RETURN(const Attr* root, ReadAttrRef(s));
      Attr* a = module_.NewAttr(Attr::Kind::kSymbol);
      a->text = root->text;
      return a;
    }
    case 6: {  // TypeAttr
      Attr* a = module_.NewAttr(Attr::Kind::kType);
      KILN_ASSIGN_OR_RETURN(a->type, ReadTypeRef(s));
      return a;
    }
    case 7: return module_.NewAttr(Attr::Kind::kUnit);
    case 8: {  // IntegerAttr
      KILN_ASSIGN_OR_RETURN(TypeId type, ReadTypeRef(s));
      return DecodeInteger(s, type);
    }
    default: {
      // Locations and the rest are never read as op attributes here.
      Attr* a = module_.NewAttr(Attr::Kind::kOpaque);
      a->dialect_name = "builtin";
      a->text = "#builtin.attribute_code_" + std::to_string(code);
      return a;
    }
  }
}

// An APInt of `width` bits as the bytecode writes it: a byte up to 8 bits,
// a signed varint up to 64, else words.
Result<uint64_t> ReadAPInt(ByteStream& s, int width) {
  if (width <= 8) {
    KILN_ASSIGN_OR_RETURN(uint8_t b, s.Byte());
    return b;
  }
  if (width <= 64) {
    KILN_ASSIGN_OR_RETURN(int64_t v, s.SignedVarInt());
    return static_cast<uint64_t>(v);
  }
  KILN_ASSIGN_OR_RETURN(uint64_t words, s.Count());
  uint64_t low = 0;
  for (uint64_t i = 0; i < words; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t w, s.SignedVarInt());
    if (i == 0) low = static_cast<uint64_t>(w);
  }
  return low;
}

}  // namespace kiln::stablehlo::bytecode
