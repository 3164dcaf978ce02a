// Attributes of MLIR text: builtin values (bool, integer, float, string,
// array, dictionary, symbol, type, array<...>), `#dialect<enum VALUE>`,
// `#dialect.name<key = value, ...>` (convolution dimension numbers in their
// `[b, 0, 1, f]x[...]->[...]` form), aliases and locations.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#include "compiler/stablehlo/text_parser_internal.h"

namespace kiln::stablehlo::text_internal {
namespace {

using hlo::PrimitiveType;

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '-' || c == '"';
}

}  // namespace

std::string Parser::SpanText(const Token& start) const {
  const std::string_view raw = lex_.source().substr(start.offset, tok_.offset - start.offset);
  std::string out;
  out.reserve(raw.size());
  bool in_string = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < raw.size()) {
        out += raw[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (!std::isspace(static_cast<unsigned char>(c))) {
      out += c;
      continue;
    }
    size_t next = i;
    while (next < raw.size() && std::isspace(static_cast<unsigned char>(raw[next]))) ++next;
    // One space stays only where it separates two words.
    if (!out.empty() && next < raw.size() && IsWordChar(out.back()) && IsWordChar(raw[next])) out += ' ';
    i = next - 1;
  }
  return out;
}

Status Parser::SkipBalanced() {
  int depth = 0;
  const Token start = tok_;
  do {
    switch (tok_.kind) {
      case Tok::kLParen: case Tok::kLBrace: case Tok::kLSquare: case Tok::kLess:
        ++depth;
        break;
      case Tok::kRParen: case Tok::kRBrace: case Tok::kRSquare: case Tok::kGreater:
        --depth;
        break;
      case Tok::kEof: case Tok::kError:
        return ErrorAt(start, "unbalanced brackets");
      default:
        break;
    }
    Advance();
  } while (depth > 0);
  return Ok();
}

Status Parser::SkipLocation() {
  if (!IsBare("loc") || Peek().kind != Tok::kLParen) return Ok();
  Advance();
  return SkipBalanced();
}

Result<int64_t> Parser::ParseSignedInt() {
  const bool negative = Consume(Tok::kMinus);
  if (!Is(Tok::kInteger)) return Expected("an integer");
  uint64_t v = 0;
  std::string_view text = tok_.text;
  const bool hex = text.size() > 2 && text[1] == 'x';
  auto [p, ec] = hex ? std::from_chars(text.data() + 2, text.data() + text.size(), v, 16)
                     : std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return ErrorHere("integer out of range");
  Advance();
  if (negative) {
    if (v > uint64_t{1} << 63) return ErrorHere("integer out of range");
    return static_cast<int64_t>(0 - v);
  }
  return static_cast<int64_t>(v);
}

Result<std::vector<int64_t>> Parser::ParseIntList() {
  KILN_RETURN_IF_ERROR(Expect(Tok::kLSquare, "to open an integer list"));
  std::vector<int64_t> out;
  while (!Is(Tok::kRSquare)) {
    if (Consume(Tok::kQuestion)) {
      out.push_back(kDynamic);
    } else {
      KILN_ASSIGN_OR_RETURN(int64_t v, ParseSignedInt());
      out.push_back(v);
    }
    if (out.size() > (size_t{1} << 24)) return ErrorHere("integer list too long");
    if (!Consume(Tok::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kRSquare, "to close an integer list"));
  return out;
}

Result<const Attr*> Parser::ParseIntListAttr() {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseIntList());
  return I64ArrayAttr(std::move(values));
}

Status Parser::ParseAttrDict(std::vector<NamedAttr>& out) {
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace, "to open an attribute dictionary"));
  if (++depth_ > kMaxNesting) return ErrorHere("attributes nest too deeply");
  while (!Is(Tok::kRBrace)) {
    std::string_view name;
    if (Is(Tok::kBareId)) {
      name = module_.Intern(tok_.text);
    } else if (Is(Tok::kString)) {
      std::string decoded;
      if (!DecodeMlirString(tok_.text, decoded)) return ErrorHere("bad attribute name");
      name = module_.Intern(decoded);
    } else {
      return Expected("an attribute name");
    }
    Advance();
    const Attr* value = nullptr;
    if (Consume(Tok::kEqual)) {
      KILN_ASSIGN_OR_RETURN(value, ParseAttribute());
    } else {
      value = NewAttr(Attr::Kind::kUnit);
    }
    out.push_back({name, value});
    if (!Consume(Tok::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace, "to close an attribute dictionary"));
  --depth_;
  return Ok();
}

Result<const Attr*> Parser::ParseDenseArray() {
  Advance();  // array
  KILN_RETURN_IF_ERROR(Expect(Tok::kLess, "after array"));
  KILN_ASSIGN_OR_RETURN(TypeId element, ParseElementOrScalarType());
  Attr* a = NewAttr(Attr::Kind::kDenseArray);
  a->type = element;
  const PrimitiveType e = module_.types()[element].element;
  if (Consume(Tok::kColon)) {
    std::vector<double> floats;
    while (true) {
      if (e == PrimitiveType::kPred && (IsBare("true") || IsBare("false"))) {
        a->ints.push_back(IsBare("true") ? 1 : 0);
        Advance();
      } else if (hlo::IsFloatingPoint(e)) {
        const bool negative = Consume(Tok::kMinus);
        if (!Is(Tok::kFloat) && !Is(Tok::kInteger)) return Expected("a float");
        double v = 0;
        std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
        Advance();
        floats.push_back(negative ? -v : v);
      } else {
        KILN_ASSIGN_OR_RETURN(int64_t v, ParseSignedInt());
        a->ints.push_back(v);
      }
      if (a->ints.size() + floats.size() > (size_t{1} << 24)) return ErrorHere("array too long");
      if (!Consume(Tok::kComma)) break;
    }
    if (!floats.empty()) {
      a->kind = Attr::Kind::kDense;
      hlo::Literal lit(hlo::Shape(PrimitiveType::kF64, {static_cast<int64_t>(floats.size())}));
      for (size_t i = 0; i < floats.size(); ++i) lit.Set<double>(static_cast<int64_t>(i), floats[i]);
      a->literal = std::make_shared<hlo::Literal>(std::move(lit));
    }
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "to close array<...>"));
  return a;
}

// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` into the fields of
// #stablehlo.conv's raw form.
Result<const Attr*> ParseConvDimsBody(Parser& p) {
  struct Part {
    int64_t first = -1;   // b or i
    int64_t second = -1;  // f or o
    std::vector<int64_t> spatial;
  };
  auto parse_part = [&](char a, char b) -> Result<Part> {
    Part part;
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kLSquare, "in convolution dimension numbers"));
    std::vector<std::pair<int64_t, int64_t>> spatial;  // (spatial index, position)
    int64_t pos = 0;
    while (!p.Is(Tok::kRSquare)) {
      if (p.Is(Tok::kBareId) && p.tok().text.size() == 1 && (p.tok().text[0] == a || p.tok().text[0] == b)) {
        (p.tok().text[0] == a ? part.first : part.second) = pos;
        p.Advance();
      } else if (p.Is(Tok::kInteger)) {
        KILN_ASSIGN_OR_RETURN(int64_t k, p.ParseSignedInt());
        if (k < 0 || k > 64) return p.ErrorHere("bad spatial dimension");
        spatial.emplace_back(k, pos);
      } else if (p.Consume(Tok::kQuestion)) {
      } else {
        return p.Expected(std::string("'") + a + "', '" + b + "' or a spatial dimension");
      }
      ++pos;
      if (pos > 64) return p.ErrorHere("too many convolution dimensions");
      if (!p.Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kRSquare, "in convolution dimension numbers"));
    part.spatial.assign(spatial.size(), -1);
    for (const auto& [k, position] : spatial) {
      if (k >= static_cast<int64_t>(spatial.size()) || part.spatial[k] != -1) {
        return p.ErrorHere("spatial dimensions must be 0..n-1, each once");
      }
      part.spatial[k] = position;
    }
    if (part.first < 0 || part.second < 0) return p.ErrorHere("convolution dimension numbers miss a dimension");
    return part;
  };
  KILN_ASSIGN_OR_RETURN(Part in, parse_part('b', 'f'));
  if (!p.ConsumeBare("x")) return p.Expected("'x' in convolution dimension numbers");
  KILN_ASSIGN_OR_RETURN(Part kernel, parse_part('i', 'o'));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kArrow, "in convolution dimension numbers"));
  KILN_ASSIGN_OR_RETURN(Part out, parse_part('b', 'f'));
  Attr* a = p.NewAttr(Attr::Kind::kStruct);
  a->dialect_name = "stablehlo.conv";
  MlirModule& m = p.module();
  auto add = [&](std::string_view name, const Attr* v) { a->fields.push_back({m.Intern(name), v}); };
  add("input_batch_dimension", p.IntAttr(in.first));
  add("input_feature_dimension", p.IntAttr(in.second));
  add("input_spatial_dimensions", p.I64ArrayAttr(in.spatial));
  add("kernel_input_feature_dimension", p.IntAttr(kernel.first));
  add("kernel_output_feature_dimension", p.IntAttr(kernel.second));
  add("kernel_spatial_dimensions", p.I64ArrayAttr(kernel.spatial));
  add("output_batch_dimension", p.IntAttr(out.first));
  add("output_feature_dimension", p.IntAttr(out.second));
  add("output_spatial_dimensions", p.I64ArrayAttr(out.spatial));
  return a;
}

Result<const Attr*> Parser::ParseHashAttribute() {
  const Token name = tok_;
  const std::string_view src = lex_.source();
  const size_t after = name.offset + name.text.size();
  const bool bracketed = after < src.size() && src[after] == '<';
  if (!bracketed) {
    auto it = attr_aliases_.find(std::string(name.text));
    if (it == attr_aliases_.end()) return ErrorAt(name, "undefined attribute alias " + std::string(name.text));
    Advance();
    return it->second;
  }
  const std::string_view full = name.text.substr(1);
  const size_t dot = full.find('.');
  // Try the structured forms; on a form this parser does not know, keep
  // the text as written.
  const uint32_t save_pos = tok_.offset;
  Advance();  // the name
  Advance();  // <
  if (dot == std::string_view::npos) {
    // #stablehlo<comparison_direction EQ>
    if (Is(Tok::kBareId)) {
      std::string mnemonic(tok_.text);
      Advance();
      if (Is(Tok::kBareId) && Peek().kind == Tok::kGreater) {
        const Attr* e = EnumAttr(mnemonic, tok_.text);
        Advance();
        Advance();
        return e;
      }
    }
  } else {
    std::string dialect_name(full);
    if (full.substr(dot + 1) == "conv") {
      if (Is(Tok::kLSquare)) {
        KILN_ASSIGN_OR_RETURN(const Attr* conv, ParseConvDimsBody(*this));
        KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "to close #stablehlo.conv<...>"));
        return conv;
      }
      ConsumeBare("raw");
    }
    Attr* a = NewAttr(Attr::Kind::kStruct);
    a->dialect_name = dialect_name;
    bool ok = true;
    int position = 0;
    while (ok && !Is(Tok::kGreater)) {
      std::string_view field;
      if (Is(Tok::kBareId) && Peek().kind == Tok::kEqual) {
        field = module_.Intern(tok_.text);
        Advance();
        Advance();
      } else {
        field = module_.Intern(std::to_string(position));
      }
      ++position;
      Result<const Attr*> value = ParseAttribute();
      if (!value) {
        ok = false;
        break;
      }
      a->fields.push_back({field, *value});
      if (!Consume(Tok::kComma)) break;
    }
    if (ok && Consume(Tok::kGreater)) return a;
  }
  // Unknown form: keep it opaque.
  SeekTo(save_pos);
  const Token start = tok_;
  Advance();
  KILN_RETURN_IF_ERROR(SkipBalanced());
  Attr* opaque = NewAttr(Attr::Kind::kOpaque);
  opaque->text = SpanText(start);
  opaque->dialect_name = full;
  return opaque;
}

Result<const Attr*> Parser::ParseAttribute() {
  if (++depth_ > kMaxNesting) return ErrorHere("attributes nest too deeply");
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{depth_};
  TypeTable& types = module_.types();
  switch (tok_.kind) {
    case Tok::kBareId: {
      if (IsBare("true") || IsBare("false")) {
        const Attr* b = BoolAttr(IsBare("true"));
        Advance();
        return b;
      }
      if (IsBare("unit")) {
        Advance();
        return NewAttr(Attr::Kind::kUnit);
      }
      if (IsBare("dense")) return ParseDense();
      if (IsBare("array")) return ParseDenseArray();
      if (IsBare("dense_resource") || IsBare("sparse")) {
        return ErrorHere(std::string(tok_.text) + " attributes are not supported; write the values with dense<...>");
      }
      if (IsBare("affine_map") || IsBare("affine_set") || IsBare("distinct")) {
        const Token start = tok_;
        Advance();
        if (Is(Tok::kLess) || Is(Tok::kLSquare)) KILN_RETURN_IF_ERROR(SkipBalanced());
        if (Is(Tok::kLess)) KILN_RETURN_IF_ERROR(SkipBalanced());
        Attr* a = NewAttr(Attr::Kind::kOpaque);
        a->text = SpanText(start);
        return a;
      }
      if (AtTypeStart()) {
        KILN_ASSIGN_OR_RETURN(TypeId t, ParseType());
        Attr* a = NewAttr(Attr::Kind::kType);
        a->type = t;
        return a;
      }
      // A bare word: an enum value written without its dialect (FFT, DEFAULT).
      const Attr* e = EnumAttr("", tok_.text);
      Advance();
      return e;
    }
    case Tok::kMinus:
    case Tok::kInteger:
    case Tok::kFloat: {
      const Token at = tok_;
      const bool negative = Is(Tok::kMinus);
      if (negative) Advance();
      if (!Is(Tok::kInteger) && !Is(Tok::kFloat)) return Expected("a number");
      const Token number = tok_;
      Advance();
      TypeId type = kNoType;
      if (Consume(Tok::kColon)) {
        KILN_ASSIGN_OR_RETURN(type, ParseType());
      }
      const bool is_float_type = type != kNoType && hlo::IsFloatingPoint(types[type].element) &&
                                 types[type].kind == TypeKind::kScalar;
      if (number.kind == Tok::kFloat || is_float_type) {
        Attr* a = NewAttr(Attr::Kind::kFloat);
        a->type = type == kNoType ? types.Scalar(PrimitiveType::kF64) : type;
        std::string_view text = number.text;
        if (number.kind == Tok::kInteger && text.size() > 2 && text[1] == 'x') {
          // Bits of the float: 0x7FC00000 : f32.
          uint64_t bits = 0;
          std::from_chars(text.data() + 2, text.data() + text.size(), bits, 16);
          const PrimitiveType e = types[a->type].element;
          if (e == PrimitiveType::kF64) {
            std::memcpy(&a->f, &bits, 8);
          } else if (e == PrimitiveType::kF32) {
            uint32_t b32 = static_cast<uint32_t>(bits);
            float f;
            std::memcpy(&f, &b32, 4);
            a->f = f;
          } else {
            a->f = std::nan("");
          }
        } else {
          auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), a->f);
          if (ec != std::errc() && ec != std::errc::result_out_of_range) return ErrorAt(at, "bad number");
        }
        if (negative) a->f = -a->f;
        return a;
      }
      uint64_t v = 0;
      std::string_view text = number.text;
      const bool hex = text.size() > 2 && text[1] == 'x';
      auto [p, ec] = hex ? std::from_chars(text.data() + 2, text.data() + text.size(), v, 16)
                         : std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc()) return ErrorAt(at, "integer out of range");
      Attr* a = NewAttr(Attr::Kind::kInt);
      a->i = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
      a->type = type == kNoType ? types.Scalar(PrimitiveType::kS64) : type;
      return a;
    }
    case Tok::kString: {
      Attr* a = NewAttr(Attr::Kind::kString);
      if (!DecodeMlirString(tok_.text, a->text)) return ErrorHere("bad string escape");
      Advance();
      if (Consume(Tok::kColon)) {
        KILN_ASSIGN_OR_RETURN(TypeId ignored, ParseType());
        (void)ignored;
      }
      return a;
    }
    case Tok::kLSquare: {
      Advance();
      Attr* a = NewAttr(Attr::Kind::kArray);
      while (!Is(Tok::kRSquare)) {
        KILN_ASSIGN_OR_RETURN(const Attr* item, ParseAttribute());
        a->items.push_back(item);
        if (a->items.size() > (size_t{1} << 24)) return ErrorHere("array too long");
        if (!Consume(Tok::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kRSquare, "to close an array"));
      return a;
    }
    case Tok::kLBrace: {
      Attr* a = NewAttr(Attr::Kind::kDict);
      KILN_RETURN_IF_ERROR(ParseAttrDict(a->fields));
      return a;
    }
    case Tok::kAtId: {
      Attr* a = NewAttr(Attr::Kind::kSymbol);
      a->text = tok_.text.substr(1);
      if (!a->text.empty() && a->text[0] == '"') {
        std::string decoded;
        if (!DecodeMlirString(a->text, decoded)) return ErrorHere("bad symbol");
        a->text = decoded;
      }
      Advance();
      while (Is(Tok::kColon) && Peek().kind == Tok::kColon) {
        Advance();
        Advance();
        if (!Is(Tok::kAtId)) return Expected("a nested symbol");
        a->text += "::" + std::string(tok_.text.substr(1));
        Advance();
      }
      return a;
    }
    case Tok::kHashId:
      return ParseHashAttribute();
    case Tok::kQuestion:
      Advance();
      return IntAttr(kDynamic);
    case Tok::kBangId:
    case Tok::kLParen: {
      KILN_ASSIGN_OR_RETURN(TypeId t, ParseType());
      Attr* a = NewAttr(Attr::Kind::kType);
      a->type = t;
      return a;
    }
    default:
      return Expected("an attribute value");
  }
}

}  // namespace kiln::stablehlo::text_internal
