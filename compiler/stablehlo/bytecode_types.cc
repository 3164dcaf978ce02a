// Types of the bytecode's table: VHLO's type encodings
// (stablehlo/dialect/VhloBytecode.cpp's codes) and the builtin dialect's,
// decoded into the text reader's type table (bytecode_internal.h). A code
// this reader does not know becomes an opaque type, so that only the ops
// using it fail to convert.
#include <string>
#include <vector>

#include "compiler/stablehlo/bytecode_internal.h"
#include "compiler/stablehlo/mlir_types_text.h"

namespace kiln::stablehlo::bytecode {
namespace {

using hlo::PrimitiveType;

// VHLO type codes: element type names in MLIR spelling.
constexpr std::string_view kVhloElementNames[] = {
    /*0*/ "i1",        /*1*/ "",           /*2*/ "bf16",        /*3*/ "f16",       /*4*/ "f32",
    /*5*/ "f64",       /*6*/ "f8E4M3FN",   /*7*/ "f8E5M2",      /*8*/ "",          /*9*/ "index",
    /*10*/ "i4",       /*11*/ "i8",        /*12*/ "i16",        /*13*/ "i32",      /*14*/ "i64",
    /*15*/ "ui4",      /*16*/ "ui8",       /*17*/ "ui16",       /*18*/ "ui32",     /*19*/ "ui64",
    /*20*/ "",         /*21*/ "",          /*22*/ "",           /*23*/ "",         /*24*/ "",
    /*25*/ "",         /*26*/ "",          /*27*/ "f8E4M3FNUZ", /*28*/ "f8E5M2FNUZ", /*29*/ "f8E4M3B11FNUZ",
    /*30*/ "",         /*31*/ "i2",        /*32*/ "ui2",        /*33*/ "",         /*34*/ "tf32",
    /*35*/ "f8E4M3",   /*36*/ "f8E3M4",    /*37*/ "f4E2M1FN",   /*38*/ "f6E2M3FN", /*39*/ "f6E3M2FN",
    /*40*/ "f8E8M0FNU"};

enum VhloTypeCode : uint64_t {
  kComplex = 1,
  kFunction = 8,
  kRankedTensor = 20,
  kRankedTensorWithEncoding = 21,
  kToken = 22,
  kTuple = 23,
  kUniformQuantized = 24,
  kUnrankedTensor = 25,
  kWitness = 26,
  kUniformQuantizedPerAxis = 30,
  kNone = 33,
  kRankedBuffer = 41,
  kFuture = 42,
};

}  // namespace

Result<TypeId> Reader::TypeAt(uint64_t index) {
  if (index >= type_entries_.size()) {
    return Fail("type " + std::to_string(index) + " of " + std::to_string(type_entries_.size()) + " does not exist");
  }
  if (type_state_[index] == 2) return types_[index];
  if (type_state_[index] == 1) return Fail("type " + std::to_string(index) + " refers to itself");
  if (depth > kMaxDecodeDepth) return Fail("types nest too deeply");
  type_state_[index] = 1;
  ++depth;
  Result<TypeId> t = DecodeType(type_entries_[index]);
  --depth;
  if (!t) return t;
  types_[index] = *t;
  type_state_[index] = 2;
  return *t;
}

Result<TypeId> Reader::DecodeType(const TableEntry& e) {
  ByteStream s(input_, e.begin, e.end, "type");
  const std::string_view dialect = dialects_[e.dialect];
  if (e.custom && dialect == "vhlo") return DecodeVhloType(s);
  if (e.custom && dialect == "builtin") return DecodeBuiltinType(s);
  TypeInfo info;
  info.kind = TypeKind::kOpaque;
  if (!e.custom) {
    KILN_ASSIGN_OR_RETURN(std::string_view text, s.CString());
    info.unsupported_element = text;
  } else {
    info.unsupported_element = "!" + std::string(dialect) + ".<encoded>";
  }
  return module_.types().Intern(std::move(info));
}

Result<TypeId> Reader::TensorType(ByteStream& s, bool with_encoding) {
  const Attr* encoding = nullptr;
  if (with_encoding) {
    KILN_ASSIGN_OR_RETURN(encoding, ReadAttrRef(s));
  }
  KILN_ASSIGN_OR_RETURN(uint64_t rank, s.Count());
  if (rank > static_cast<uint64_t>(hlo::kMaxRank)) return s.Fail("tensor rank over 64");
  TypeInfo info;
  info.kind = TypeKind::kTensor;
  for (uint64_t i = 0; i < rank; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t d, s.SignedVarInt());
    if (d < 0) d = kDynamic;  // MLIR's dynamic size is INT64_MIN
    if (d > (int64_t{1} << 50)) return s.Fail("tensor dimension too large");
    info.dims.push_back(d);
  }
  KILN_ASSIGN_OR_RETURN(TypeId element, ReadTypeRef(s));
  const TypeInfo& el = module_.types()[element];
  if (el.kind != TypeKind::kScalar) return s.Fail("a tensor's element type is not a scalar type");
  info.element = el.element;
  info.is_index = el.is_index;
  info.quant = el.quant;
  info.unsupported_element = el.unsupported_element;
  if (encoding != nullptr && encoding->kind == Attr::Kind::kStruct) {
    const Attr* bounds = encoding->Field("bounds");
    if (bounds != nullptr && bounds->kind == Attr::Kind::kArray && bounds->items.size() == rank) {
      for (const Attr* b : bounds->items) info.bounds.push_back(b->kind == Attr::Kind::kInt ? b->i : kDynamic);
    }
  }
  return module_.types().Intern(std::move(info));
}

Result<TypeId> Reader::DecodeVhloType(ByteStream& s) {
  TypeTable& types = module_.types();
  KILN_ASSIGN_OR_RETURN(uint64_t code, s.VarInt());
  TypeInfo info;
  switch (code) {
    case kComplex: {
      KILN_ASSIGN_OR_RETURN(TypeId inner, ReadTypeRef(s));
      const PrimitiveType e = types[inner].element;
      if (e != PrimitiveType::kF32 && e != PrimitiveType::kF64) return s.Fail("complex of neither f32 nor f64");
      return types.Scalar(e == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    }
    case kFunction: {
      info.kind = TypeKind::kFunction;
      KILN_ASSIGN_OR_RETURN(uint64_t inputs, s.Count());
      for (uint64_t i = 0; i < inputs; ++i) {
        KILN_ASSIGN_OR_RETURN(TypeId t, ReadTypeRef(s));
        info.members.push_back(t);
      }
      KILN_ASSIGN_OR_RETURN(uint64_t outputs, s.Count());
      for (uint64_t i = 0; i < outputs; ++i) {
        KILN_ASSIGN_OR_RETURN(TypeId t, ReadTypeRef(s));
        info.results.push_back(t);
      }
      return types.Intern(std::move(info));
    }
    case kRankedTensor: return TensorType(s, false);
    case kRankedTensorWithEncoding: return TensorType(s, true);
    case kToken:
      info.kind = TypeKind::kToken;
      return types.Intern(std::move(info));
    case kTuple: {
      info.kind = TypeKind::kTuple;
      KILN_ASSIGN_OR_RETURN(uint64_t n, s.Count());
      for (uint64_t i = 0; i < n; ++i) {
        KILN_ASSIGN_OR_RETURN(TypeId t, ReadTypeRef(s));
        info.members.push_back(t);
      }
      return types.Intern(std::move(info));
    }
    case kUniformQuantized:
    case kUniformQuantizedPerAxis: {
      KILN_ASSIGN_OR_RETURN(uint64_t flags, s.VarInt());
      KILN_ASSIGN_OR_RETURN(TypeId storage, ReadTypeRef(s));
      KILN_ASSIGN_OR_RETURN(TypeId expressed, ReadTypeRef(s));
      QuantInfo q;
      const PrimitiveType width_type = types[storage].element;
      if (!hlo::IsInteger(width_type)) return s.Fail("quantized storage is not an integer type");
      // Signedness is a flag; the storage type gives the width.
      const int bits = hlo::BitWidth(width_type);
      const std::string name = std::string((flags & 1) ? "i" : "ui") + std::to_string(bits);
      std::optional<PrimitiveType> st = ElementTypeFromMlirName(name);
      if (!st) return s.Fail("quantized storage of " + std::to_string(bits) + " bits");
      q.storage = *st;
      q.expressed = types[expressed].element;
      if (!hlo::IsFloatingPoint(q.expressed)) return s.Fail("quantized expressed type is not a float");
      if (code == kUniformQuantized) {
        KILN_ASSIGN_OR_RETURN(uint64_t scale_bits, ReadAPInt(s, 64));
        KILN_ASSIGN_OR_RETURN(int64_t zero_point, s.SignedVarInt());
        q.scales.push_back(std::bit_cast<double>(scale_bits));
        q.zero_points.push_back(zero_point);
        KILN_ASSIGN_OR_RETURN(q.storage_min, s.SignedVarInt());
        KILN_ASSIGN_OR_RETURN(q.storage_max, s.SignedVarInt());
      } else {
        KILN_ASSIGN_OR_RETURN(uint64_t axis, s.VarInt());
        if (axis > static_cast<uint64_t>(hlo::kMaxRank)) return s.Fail("bad quantized dimension");
        q.axis = static_cast<int64_t>(axis);
        KILN_ASSIGN_OR_RETURN(q.storage_min, s.SignedVarInt());
        KILN_ASSIGN_OR_RETURN(q.storage_max, s.SignedVarInt());
        KILN_ASSIGN_OR_RETURN(uint64_t scales, s.Count());
        for (uint64_t i = 0; i < scales; ++i) {
          KILN_ASSIGN_OR_RETURN(uint64_t bits64, ReadAPInt(s, 64));
          q.scales.push_back(std::bit_cast<double>(bits64));
        }
        KILN_ASSIGN_OR_RETURN(uint64_t zero_points, s.Count());
        for (uint64_t i = 0; i < zero_points; ++i) {
          KILN_ASSIGN_OR_RETURN(int64_t zp, s.SignedVarInt());
          q.zero_points.push_back(zp);
        }
        if (q.scales.size() != q.zero_points.size() || q.scales.empty()) return s.Fail("bad per-axis parameters");
      }
      info.kind = TypeKind::kScalar;
      info.element = q.storage;
      info.quant = types.InternQuant(std::move(q));
      return types.Intern(std::move(info));
    }
    case kUnrankedTensor: {
      KILN_ASSIGN_OR_RETURN(TypeId element, ReadTypeRef(s));
      info.kind = TypeKind::kTensor;
      info.unranked = true;
      info.element = types[element].element;
      info.unsupported_element = types[element].unsupported_element;
      return types.Intern(std::move(info));
    }
    case kNone:
      info.kind = TypeKind::kNone;
      return types.Intern(std::move(info));
    case kFuture: {
      // !stablehlo.future<T, U>: no HLO shape; kept as the text the text
      // reader keeps for it.
      KILN_ASSIGN_OR_RETURN(uint64_t n, s.Count());
      std::string text = "!stablehlo.future<";
      for (uint64_t i = 0; i < n; ++i) {
        KILN_ASSIGN_OR_RETURN(TypeId t, ReadTypeRef(s));
        if (i > 0) text += ",";
        AppendTypeText(types, t, text);
      }
      info.kind = TypeKind::kOpaque;
      info.unsupported_element = text + ">";
      return types.Intern(std::move(info));
    }
    case kRankedBuffer: {
      KILN_ASSIGN_OR_RETURN(TypeId contents, TensorType(s, false));
      info.kind = TypeKind::kBuffer;
      info.members.push_back(contents);
      return types.Intern(std::move(info));
    }
    default: break;
  }
  if (code < std::size(kVhloElementNames) && !kVhloElementNames[code].empty()) {
    const std::string_view name = kVhloElementNames[code];
    info.kind = TypeKind::kScalar;
    if (std::optional<PrimitiveType> e = ElementTypeFromMlirName(name)) {
      info.element = *e;
      info.is_index = name == "index";
    } else {
      info.unsupported_element = name;
    }
    return types.Intern(std::move(info));
  }
  info.kind = TypeKind::kOpaque;
  info.unsupported_element = code == kWitness ? "!shape.witness" : "!vhlo.type_code_" + std::to_string(code);
  return types.Intern(std::move(info));
}

Result<TypeId> Reader::DecodeBuiltinType(ByteStream& s) {
  KILN_ASSIGN_OR_RETURN(uint64_t code, s.VarInt());
  TypeTable& types = module_.types();
  switch (code) {
    case 0: {  // IntegerType: (width << 2) | signedness
      KILN_ASSIGN_OR_RETURN(uint64_t v, s.VarInt());
      const uint64_t width = v >> 2;
      const uint64_t signedness = v & 3;  // 0 signless, 1 signed, 2 unsigned
      const std::string name = (signedness == 2 ? "ui" : "i") + std::to_string(width);
      if (std::optional<PrimitiveType> e = ElementTypeFromMlirName(name)) return types.Scalar(*e);
      return s.Fail("integer type of " + std::to_string(width) + " bits");
    }
    case 1: {
      TypeInfo info;
      info.kind = TypeKind::kScalar;
      info.element = PrimitiveType::kS64;
      info.is_index = true;
      return types.Intern(std::move(info));
    }
    case 3: return types.Scalar(PrimitiveType::kBF16);
    case 4: return types.Scalar(PrimitiveType::kF16);
    case 5: return types.Scalar(PrimitiveType::kF32);
    case 6: return types.Scalar(PrimitiveType::kF64);
    default: {
      TypeInfo info;
      info.kind = TypeKind::kOpaque;
      info.unsupported_element = "!builtin.type_code_" + std::to_string(code);
      return types.Intern(std::move(info));
    }
  }
}

}  // namespace kiln::stablehlo::bytecode
