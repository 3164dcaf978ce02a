// Types of MLIR text: tensor<2x?xf32[, encoding]>, tuple<...>, complex<...>,
// !stablehlo.token, !quant.uniform<...>, builtin scalars, function types,
// and `!alias` references.
#include <charconv>
#include <cmath>

#include "compiler/stablehlo/mlir_types_text.h"
#include "compiler/stablehlo/text_parser_internal.h"

namespace kiln::stablehlo::text_internal {
namespace {

using hlo::PrimitiveType;

constexpr int kMaxRank = 64;

bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

// Storage range of an integer type (i8: [-128, 127]).
void StorageRange(PrimitiveType t, int64_t& lo, int64_t& hi) {
  const int bits = hlo::BitWidth(t);
  if (hlo::IsSignedInteger(t)) {
    lo = bits >= 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    hi = bits >= 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  } else {
    lo = 0;
    hi = bits >= 63 ? INT64_MAX : (int64_t{1} << bits) - 1;
  }
}

}  // namespace

bool Parser::AtTypeStart() const {
  if (tok_.kind == Tok::kBangId || tok_.kind == Tok::kLParen) return true;
  if (tok_.kind != Tok::kBareId) return false;
  return tok_.text == "tensor" || tok_.text == "tuple" || tok_.text == "complex" || tok_.text == "none" ||
         ElementTypeFromMlirName(tok_.text).has_value() || IsUnsupportedMlirElementName(tok_.text);
}

Result<TypeId> Parser::ParseElementOrScalarType() {
  TypeTable& types = module_.types();
  if (tok_.kind == Tok::kBareId) {
    if (tok_.text == "complex") {
      Advance();
      KILN_RETURN_IF_ERROR(Expect(Tok::kLess, "after complex"));
      const Token at = tok_;
      KILN_ASSIGN_OR_RETURN(TypeId inner, ParseElementOrScalarType());
      KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "to close complex<...>"));
      const PrimitiveType e = types[inner].element;
      if (types[inner].kind != TypeKind::kScalar || (e != PrimitiveType::kF32 && e != PrimitiveType::kF64)) {
        return ErrorAt(at, "complex element type must be f32 or f64");
      }
      return types.Scalar(e == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    }
    std::optional<PrimitiveType> e = ElementTypeFromMlirName(tok_.text);
    if (!e && IsUnsupportedMlirElementName(tok_.text)) {
      TypeInfo info;
      info.kind = TypeKind::kScalar;
      info.unsupported_element = tok_.text;
      Advance();
      return types.Intern(std::move(info));
    }
    if (!e) return ErrorHere("unknown element type '" + std::string(tok_.text) + "'");
    TypeInfo info;
    info.kind = TypeKind::kScalar;
    info.element = *e;
    info.is_index = tok_.text == "index";
    Advance();
    return types.Intern(std::move(info));
  }
  if (tok_.kind == Tok::kBangId && tok_.text == "!quant.uniform") {
    const Token at = tok_;
    Advance();
    KILN_RETURN_IF_ERROR(Expect(Tok::kLess, "after !quant.uniform"));
    QuantInfo q;
    // Storage type: i8, u8, ui8 (MLIR's quant dialect accepts `u8`).
    if (!Is(Tok::kBareId)) return Expected("a storage type");
    std::string storage_name(tok_.text);
    if (storage_name.size() > 1 && storage_name[0] == 'u' && storage_name[1] != 'i') {
      storage_name = "ui" + storage_name.substr(1);
    }
    std::optional<PrimitiveType> storage = ElementTypeFromMlirName(storage_name);
    if (!storage || !hlo::IsInteger(*storage)) return ErrorHere("quantized storage must be an integer type");
    q.storage = *storage;
    StorageRange(q.storage, q.storage_min, q.storage_max);
    Advance();
    if (Consume(Tok::kLess)) {
      KILN_ASSIGN_OR_RETURN(q.storage_min, ParseSignedInt());
      KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "in a storage range"));
      KILN_ASSIGN_OR_RETURN(q.storage_max, ParseSignedInt());
      KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "after a storage range"));
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "after the storage type"));
    KILN_ASSIGN_OR_RETURN(TypeId expressed, ParseElementOrScalarType());
    q.expressed = types[expressed].element;
    if (!hlo::IsFloatingPoint(q.expressed)) return ErrorAt(at, "quantized expressed type must be a float");
    if (Consume(Tok::kColon)) {
      KILN_ASSIGN_OR_RETURN(q.axis, ParseSignedInt());
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "before the scale"));
    const bool per_axis = Consume(Tok::kLBrace);
    while (true) {
      bool negative = Consume(Tok::kMinus);
      if (!Is(Tok::kFloat) && !Is(Tok::kInteger)) return Expected("a scale");
      double scale = 0;
      auto [p, ec] = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), scale);
      if (ec != std::errc() || !std::isfinite(scale)) return ErrorHere("bad scale");
      Advance();
      q.scales.push_back(negative ? -scale : scale);
      int64_t zero_point = 0;
      if (Consume(Tok::kColon)) {
        KILN_ASSIGN_OR_RETURN(zero_point, ParseSignedInt());
      }
      q.zero_points.push_back(zero_point);
      if (!per_axis || !Consume(Tok::kComma)) break;
    }
    if (per_axis) KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace, "after per-axis scales"));
    if (per_axis != (q.axis >= 0)) return ErrorAt(at, "per-axis scales need a quantized dimension");
    KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "to close !quant.uniform"));
    TypeInfo info;
    info.kind = TypeKind::kScalar;
    info.element = q.storage;
    info.quant = types.InternQuant(std::move(q));
    return types.Intern(std::move(info));
  }
  if (tok_.kind == Tok::kBangId) {
    auto it = type_aliases_.find(std::string(tok_.text));
    if (it != type_aliases_.end()) {
      Advance();
      return it->second;
    }
  }
  return Expected("an element type");
}

Result<TypeId> Parser::ParseTensorType() {
  const Token start = tok_;
  const std::string_view src = lex_.source();
  size_t p = tok_.offset + tok_.text.size();
  if (p >= src.size() || src[p] != '<') return ErrorAt(start, "expected '<' after tensor");
  ++p;
  TypeInfo info;
  info.kind = TypeKind::kTensor;
  auto skip_space = [&] {
    while (p < src.size() && (src[p] == ' ' || src[p] == '\t')) ++p;
  };
  skip_space();
  if (p + 1 < src.size() && src[p] == '*' && src[p + 1] == 'x') {
    info.unranked = true;
    p += 2;
  } else {
    while (p < src.size()) {
      if (src[p] == '?' && p + 1 < src.size() && src[p + 1] == 'x') {
        info.dims.push_back(kDynamic);
        p += 2;
      } else if (IsDigitChar(src[p])) {
        size_t q = p;
        int64_t d = 0;
        while (q < src.size() && IsDigitChar(src[q])) {
          if (d > (int64_t{1} << 50)) return ErrorAt(start, "tensor dimension too large");
          d = d * 10 + (src[q] - '0');
          ++q;
        }
        if (q >= src.size() || src[q] != 'x') break;  // not a dimension: let the element type fail
        info.dims.push_back(d);
        p = q + 1;
      } else {
        break;
      }
      if (info.dims.size() > kMaxRank) return ErrorAt(start, "tensor rank over 64");
    }
  }
  SeekTo(static_cast<uint32_t>(p));
  KILN_ASSIGN_OR_RETURN(TypeId element, ParseElementOrScalarType());
  const TypeInfo& e = module_.types()[element];
  info.element = e.element;
  info.is_index = e.is_index;
  info.quant = e.quant;
  info.unsupported_element = e.unsupported_element;
  if (Consume(Tok::kComma)) {
    const Token at = tok_;
    KILN_ASSIGN_OR_RETURN(const Attr* encoding, ParseAttribute());
    // #stablehlo.bounds<?, 4> or #stablehlo.type_extensions<bounds = [?, 4]>.
    const Attr* bounds = encoding;
    if (encoding->kind == Attr::Kind::kStruct && encoding->Field("bounds") != nullptr) {
      bounds = encoding->Field("bounds");
    }
    std::vector<int64_t> values;
    if (bounds->kind == Attr::Kind::kStruct || bounds->kind == Attr::Kind::kArray) {
      const auto& items = bounds->kind == Attr::Kind::kArray ? bounds->items : std::vector<const Attr*>{};
      if (bounds->kind == Attr::Kind::kStruct) {
        for (const NamedAttr& f : bounds->fields) values.push_back(f.value->kind == Attr::Kind::kInt ? f.value->i : kDynamic);
      }
      for (const Attr* item : items) values.push_back(item->kind == Attr::Kind::kInt ? item->i : kDynamic);
      if (values.size() != info.dims.size()) return ErrorAt(at, "tensor bounds do not match its rank");
      info.bounds = std::move(values);
    }
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "to close tensor<...>"));
  return module_.types().Intern(std::move(info));
}

Result<std::vector<TypeId>> Parser::ParseResultTypes() {
  std::vector<TypeId> out;
  if (Consume(Tok::kLParen)) {
    while (!Is(Tok::kRParen)) {
      KILN_ASSIGN_OR_RETURN(TypeId t, ParseType());
      out.push_back(t);
      if (!Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after result types"));
    return out;
  }
  KILN_ASSIGN_OR_RETURN(TypeId t, ParseType());
  out.push_back(t);
  return out;
}

Result<std::vector<TypeId>> Parser::ParseTypeListNoParens() {
  std::vector<TypeId> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(TypeId t, ParseType());
    out.push_back(t);
    if (!Is(Tok::kComma)) return out;
    Advance();
  }
}

Result<TypeSignature> Parser::ParseTypeSignature() {
  TypeSignature sig;
  if (Is(Tok::kLParen)) {
    Advance();
    while (!Is(Tok::kRParen)) {
      KILN_ASSIGN_OR_RETURN(TypeId t, ParseType());
      sig.inputs.push_back(t);
      if (!Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after input types"));
    if (!Consume(Tok::kArrow)) return Expected("'->' after input types");
    sig.arrow = true;
    KILN_ASSIGN_OR_RETURN(sig.results, ParseResultTypes());
    return sig;
  }
  KILN_ASSIGN_OR_RETURN(sig.inputs, ParseTypeListNoParens());
  if (Consume(Tok::kArrow)) {
    sig.arrow = true;
    KILN_ASSIGN_OR_RETURN(sig.results, ParseResultTypes());
  }
  return sig;
}

Result<TypeId> Parser::ParseType() {
  TypeTable& types = module_.types();
  if (++depth_ > kMaxNesting) return ErrorHere("types nest too deeply");
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{depth_};
  if (IsBare("tensor")) {
    // Memoized by the text of simple tensor types, which repeat on every op.
    const std::string_view src = lex_.source();
    const size_t open = tok_.offset + tok_.text.size();
    std::string_view key;
    if (open < src.size() && src[open] == '<') {
      const size_t close = src.find('>', open);
      if (close != std::string_view::npos && close - open < 200 &&
          src.substr(open, close - open).find_first_of("<!#,\n") == std::string_view::npos) {
        key = src.substr(tok_.offset, close + 1 - tok_.offset);
        auto it = type_memo_.find(key);
        if (it != type_memo_.end()) {
          SeekTo(static_cast<uint32_t>(close + 1));
          return it->second;
        }
      }
    }
    KILN_ASSIGN_OR_RETURN(TypeId id, ParseTensorType());
    if (!key.empty()) type_memo_.emplace(key, id);
    return id;
  }
  if (IsBare("tuple")) {
    Advance();
    KILN_RETURN_IF_ERROR(Expect(Tok::kLess, "after tuple"));
    TypeInfo info;
    info.kind = TypeKind::kTuple;
    while (!Is(Tok::kGreater)) {
      KILN_ASSIGN_OR_RETURN(TypeId member, ParseType());
      info.members.push_back(member);
      if (!Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "to close tuple<...>"));
    return types.Intern(std::move(info));
  }
  if (IsBare("none")) {
    Advance();
    TypeInfo info;
    info.kind = TypeKind::kNone;
    return types.Intern(std::move(info));
  }
  if (IsBare("memref")) {
    // A buffer: read as the tensor type of its contents.
    const Token at = tok_;
    KILN_ASSIGN_OR_RETURN(TypeId contents, ParseTensorType());
    if (types[contents].unranked) return ErrorAt(at, "unranked memrefs are not supported");
    TypeInfo info;
    info.kind = TypeKind::kBuffer;
    info.members.push_back(contents);
    return types.Intern(std::move(info));
  }
  if (Is(Tok::kBangId) && tok_.text != "!quant.uniform" && tok_.text != "!stablehlo.token" &&
      tok_.text != "!mhlo.token" && !type_aliases_.contains(std::string(tok_.text))) {
    // A dialect type HLO has nothing for: kept as its text.
    const Token start = tok_;
    Advance();
    if (Is(Tok::kLess) && tok_.offset == start.offset + start.text.size()) KILN_RETURN_IF_ERROR(SkipBalanced());
    TypeInfo info;
    info.kind = TypeKind::kOpaque;
    info.unsupported_element = SpanText(start);
    return types.Intern(std::move(info));
  }
  if (Is(Tok::kBangId) && (tok_.text == "!stablehlo.token" || tok_.text == "!mhlo.token")) {
    Advance();
    TypeInfo info;
    info.kind = TypeKind::kToken;
    return types.Intern(std::move(info));
  }
  if (Is(Tok::kLParen)) {
    Advance();
    TypeInfo info;
    info.kind = TypeKind::kFunction;
    while (!Is(Tok::kRParen)) {
      KILN_ASSIGN_OR_RETURN(TypeId input, ParseType());
      info.members.push_back(input);
      if (!Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after function inputs"));
    KILN_RETURN_IF_ERROR(Expect(Tok::kArrow, "in a function type"));
    KILN_ASSIGN_OR_RETURN(info.results, ParseResultTypes());
    return types.Intern(std::move(info));
  }
  return ParseElementOrScalarType();
}

}  // namespace kiln::stablehlo::text_internal
