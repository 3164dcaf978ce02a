#include "compiler/hlo/shape_literal_parser.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "compiler/hlo/attribute_value_parser.h"
#include "compiler/hlo/float_formats.h"

namespace kiln::hlo {
namespace {

Result<int64_t> TokenInt(TokenCursor& cur, std::string_view what) {
  if (!cur.Is(TokKind::kInt)) return std::unexpected(cur.Expected(what));
  std::string_view s = cur.tok().text;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    return std::unexpected(cur.ErrorAt(cur.tok(), "integer out of range: " + std::string(s)));
  }
  cur.Advance();
  return v;
}

// Layout items XLA writes that kiln keeps as text rather than typed fields.
// Any other name is an error, as in XLA: an unknown item's extent is a guess.
bool IsTextLayoutItem(const Token& t) {
  if (t.kind == TokKind::kOctothorp || t.kind == TokKind::kAsterisk) return true;
  if (t.kind != TokKind::kIdent) return false;
  return t.text == "D" || t.text == "SC" || t.text == "P" || t.text == "M";
}

// Items after ':' in a layout. Tiles, L, E and S are typed; others are kept
// as canonical text.
Status ParseLayoutExtras(TokenCursor& cur, Layout& layout) {
  auto paren_int = [&](int64_t* out) -> Status {
    KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kLparen, "'('"));
    KILN_ASSIGN_OR_RETURN(*out, TokenInt(cur, "an integer"));
    return cur.Expect(TokKind::kRparen, "')'");
  };
  while (!cur.Is(TokKind::kRbrace)) {
    if (cur.IsIdent("T")) {
      cur.Advance();
      if (!cur.Is(TokKind::kLparen)) return std::unexpected(cur.Expected("'(' after T"));
      while (cur.Accept(TokKind::kLparen)) {
        std::vector<int64_t> tile;
        while (!cur.Is(TokKind::kRparen)) {
          if (cur.Accept(TokKind::kAsterisk)) {
            tile.push_back(kCombineTileDim);
          } else {
            KILN_ASSIGN_OR_RETURN(int64_t d, TokenInt(cur, "a tile dimension"));
            tile.push_back(d);
          }
          if (!cur.Accept(TokKind::kComma) && !cur.Is(TokKind::kRparen)) {
            return std::unexpected(cur.Expected("',' or ')' in tile"));
          }
        }
        cur.Advance();
        layout.tiles.push_back(std::move(tile));
      }
    } else if (cur.IsIdent("L")) {
      cur.Advance();
      KILN_RETURN_IF_ERROR(paren_int(&layout.tail_padding_alignment));
    } else if (cur.IsIdent("E")) {
      cur.Advance();
      KILN_RETURN_IF_ERROR(paren_int(&layout.element_size_bits));
    } else if (cur.IsIdent("S")) {
      cur.Advance();
      KILN_RETURN_IF_ERROR(paren_int(&layout.memory_space));
    } else if (IsTextLayoutItem(cur.tok())) {
      // D(...), SC(...), P(...), M(...), #(...), *(...): keep as canonical
      // text, which lexes back to the same tokens.
      std::string item(cur.tok().text);
      cur.Advance();
      if (!cur.Is(TokKind::kLparen)) return std::unexpected(cur.Expected("'(' in layout"));
      int depth = 0;
      TokKind prev = TokKind::kLparen;
      do {
        if (cur.Is(TokKind::kEof) || cur.Is(TokKind::kError)) {
          return std::unexpected(cur.Expected("')' closing layout item"));
        }
        if (cur.Is(TokKind::kLparen) || cur.Is(TokKind::kLsquare) || cur.Is(TokKind::kLbrace)) ++depth;
        if (cur.Is(TokKind::kRparen) || cur.Is(TokKind::kRsquare) || cur.Is(TokKind::kRbrace)) --depth;
        if (depth < 0) return std::unexpected(cur.Expected("balanced layout item"));
        AppendCanonicalToken(item, prev, cur.tok());
        prev = cur.tok().kind;
        cur.Advance();
      } while (depth > 0);
      layout.other += item;
    } else {
      return std::unexpected(
          cur.Expected("a layout item (D, T, L, #, *, E, S, SC, P or M)"));
    }
  }
  return Ok();
}

Status ParseLayout(TokenCursor& cur, Shape& shape) {
  Layout& layout = shape.mutable_layout();
  layout = Layout{};
  cur.Advance();  // '{'
  while (cur.Is(TokKind::kInt)) {
    KILN_ASSIGN_OR_RETURN(int64_t d, TokenInt(cur, "a dimension number"));
    layout.minor_to_major.push_back(d);
    if (!cur.Accept(TokKind::kComma)) break;
  }
  if (cur.Accept(TokKind::kColon)) {
    KILN_RETURN_IF_ERROR(ParseLayoutExtras(cur, layout));
  }
  Token close = cur.tok();
  KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kRbrace, "'}' closing layout"));
  const auto& m2m = layout.minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
    // XLA allows an empty minor_to_major only together with extras on scalars.
    if (!(m2m.empty() && shape.rank() == 0)) {
      return std::unexpected(cur.ErrorAt(
          close, "layout has " + std::to_string(m2m.size()) + " dimensions but the shape has rank " +
                     std::to_string(shape.rank())));
    }
  }
  uint64_t seen = 0;
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank() || ((seen >> d) & 1)) {
      return std::unexpected(cur.ErrorAt(close, "layout {" + std::to_string(d) +
                                                    ",...} is not a permutation of the dimensions"));
    }
    seen |= uint64_t{1} << d;
  }
  return Ok();
}

}  // namespace

bool AtArrayShape(const TokenCursor& cur) {
  if (!cur.Is(TokKind::kIdent)) return false;
  std::string_view t = cur.tok().text;
  if (t.empty() || t.size() > 13) return false;
  switch (t[0]) {
    case 'p': case 's': case 'u': case 'f': case 'b': case 'c': case 't': case 'o': break;
    default: return false;
  }
  if (!PrimitiveTypeFromName(t).has_value()) return false;
  // Shapes are almost always written "f32[...", which is decided without
  // lexing ahead.
  std::string_view src = cur.source();
  size_t after = cur.tok().offset + t.size();
  if (after < src.size() && src[after] == '[') return true;
  return cur.PeekNext().kind == TokKind::kLsquare;
}

Result<Shape> ParseShapeTokens(TokenCursor& cur, int depth, bool allow_layout) {
  if (depth > kMaxNesting) {
    return std::unexpected(cur.ErrorAt(cur.tok(), "shape nested too deeply (tuples nest at most " +
                                                      std::to_string(kMaxNesting) + " deep)"));
  }
  if (cur.Is(TokKind::kLparen)) {
    cur.Advance();
    std::vector<Shape> elements;
    while (!cur.Is(TokKind::kRparen)) {
      KILN_ASSIGN_OR_RETURN(Shape e, ParseShapeTokens(cur, depth + 1));
      elements.push_back(std::move(e));
      if (!cur.Accept(TokKind::kComma) && !cur.Is(TokKind::kRparen)) {
        return std::unexpected(cur.Expected("',' or ')' in tuple shape"));
      }
    }
    cur.Advance();
    return Shape::Tuple(std::move(elements));
  }
  if (cur.IsIdent("b") && cur.PeekNext().kind == TokKind::kLparen) {
    cur.Advance();
    cur.Advance();
    KILN_ASSIGN_OR_RETURN(Shape element, ParseShapeTokens(cur, depth + 1));
    if (!element.IsArray()) return std::unexpected(cur.Expected("an array shape inside b(...)"));
    KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kRparen, "')' closing buffer shape"));
    return Shape::Buffer(std::move(element));
  }
  if (!cur.Is(TokKind::kIdent)) return std::unexpected(cur.Expected("a shape"));
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(cur.tok().text);
  if (!type) return std::unexpected(cur.ErrorAt(cur.tok(), UnknownElementTypeMessage(cur.tok().text)));
  cur.Advance();
  KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kLsquare, "'[' after element type"));
  std::vector<int64_t> dims;
  uint64_t dynamic = 0;
  while (!cur.Is(TokKind::kRsquare)) {
    if (dims.size() >= kMaxRank) {
      return std::unexpected(cur.ErrorAt(cur.tok(), "rank exceeds " + std::to_string(kMaxRank)));
    }
    if (cur.Accept(TokKind::kQuestion)) {
      dynamic |= uint64_t{1} << dims.size();
      dims.push_back(kUnboundedDim);
    } else {
      bool bounded = cur.Accept(TokKind::kLeq);
      Token at = cur.tok();
      KILN_ASSIGN_OR_RETURN(int64_t d, TokenInt(cur, "a dimension size"));
      if (d < 0) return std::unexpected(cur.ErrorAt(at, "negative dimension size"));
      if (bounded) dynamic |= uint64_t{1} << dims.size();
      dims.push_back(d);
    }
    if (!cur.Accept(TokKind::kComma) && !cur.Is(TokKind::kRsquare)) {
      return std::unexpected(cur.Expected("',' or ']' in dimensions"));
    }
  }
  cur.Advance();
  Shape shape(*type, std::move(dims));
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if ((dynamic >> i) & 1) shape.set_dynamic_dimension(i, true);
  }
  if (allow_layout && cur.Is(TokKind::kLbrace)) {
    TokKind next = cur.PeekNext().kind;
    if (next == TokKind::kInt || next == TokKind::kColon) {
      KILN_RETURN_IF_ERROR(ParseLayout(cur, shape));
    }
  }
  return shape;
}

namespace {

// Appends one scalar element of `type` read from the cursor to `data`.
Status AppendElement(TokenCursor& cur, PrimitiveType type, std::vector<uint8_t>& data) {
  auto push = [&data](auto v) {
    size_t at = data.size();
    data.resize(at + sizeof(v));
    std::memcpy(data.data() + at, &v, sizeof(v));
  };
  const Token t = cur.tok();
  auto bad = [&](std::string_view why) -> Status {
    return std::unexpected(cur.ErrorAt(t, std::string(why) + " for " +
                                              std::string(PrimitiveTypeName(type)) + ": " +
                                              DescribeToken(t)));
  };
  if (type == PrimitiveType::kPred) {
    if (cur.IsIdent("true") || cur.IsIdent("false")) {
      push(static_cast<uint8_t>(t.text == "true"));
    } else if (t.kind == TokKind::kInt && (t.text == "0" || t.text == "1")) {
      push(static_cast<uint8_t>(t.text == "1"));
    } else {
      return bad("expected true or false");
    }
    cur.Advance();
    return Ok();
  }
  if (IsInteger(type)) {
    if (t.kind != TokKind::kInt) return bad("expected an integer");
    std::string_view s = t.text;
    bool negative = !s.empty() && s[0] == '-';
    int64_t sv = 0;
    uint64_t uv = 0;
    if (negative) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), sv);
      if (ec != std::errc()) return bad("integer out of range");
    } else {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), uv);
      if (ec != std::errc()) return bad("integer out of range");
    }
    int bits = BitWidth(type);
    if (IsSignedInteger(type)) {
      int64_t lo = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
      int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
      if (!negative) {
        if (uv > static_cast<uint64_t>(hi)) {
          // XLA accepts values up to 2^64-1 for s64 by bit-casting.
          if (bits != 64) return bad("integer out of range");
          sv = static_cast<int64_t>(uv);
        } else {
          sv = static_cast<int64_t>(uv);
        }
      } else if (sv < lo) {
        return bad("integer out of range");
      }
      switch (HostByteWidth(type)) {
        case 1: push(static_cast<int8_t>(sv)); break;
        case 2: push(static_cast<int16_t>(sv)); break;
        case 4: push(static_cast<int32_t>(sv)); break;
        default: push(sv); break;
      }
    } else {
      if (negative) return bad("negative value");
      uint64_t hi = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
      if (uv > hi) return bad("integer out of range");
      switch (HostByteWidth(type)) {
        case 1: push(static_cast<uint8_t>(uv)); break;
        case 2: push(static_cast<uint16_t>(uv)); break;
        case 4: push(static_cast<uint32_t>(uv)); break;
        default: push(uv); break;
      }
    }
    cur.Advance();
    return Ok();
  }
  // Floating point (real part of complex handled by the caller).
  double v = 0;
  uint64_t nan_payload = 0;
  bool is_nan = false;
  if (t.kind == TokKind::kIdent && t.text == "inf") {
    v = INFINITY;
  } else if (t.kind == TokKind::kNegInf) {
    v = -INFINITY;
  } else if (t.kind == TokKind::kInt || t.kind == TokKind::kDecimal) {
    std::string_view s = t.text;
    bool neg = !s.empty() && s[0] == '-';
    std::string_view body = neg ? s.substr(1) : s;
    if (body.starts_with("nan")) {
      is_nan = true;
      if (body.size() > 4) {
        std::string_view hex = body.substr(6, body.size() - 7);  // nan(0x...)
        std::from_chars(hex.data(), hex.data() + hex.size(), nan_payload, 16);
      }
      v = neg ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
    } else {
      std::string copy(s);
      char* end = nullptr;
      v = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size()) return bad("malformed number");
    }
  } else {
    return bad("expected a number");
  }
  cur.Advance();
  bool finite_input = std::isfinite(v);
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128: {
      if (is_nan && nan_payload != 0) {
        uint64_t bits = (std::signbit(v) ? (uint64_t{1} << 63) : 0) | (uint64_t{0x7ff} << 52) |
                        (nan_payload & ((uint64_t{1} << 52) - 1));
        v = std::bit_cast<double>(bits);
      }
      push(v);
      return Ok();
    }
    case PrimitiveType::kF32:
    case PrimitiveType::kC64: {
      if (finite_input && !std::isfinite(static_cast<float>(v))) return bad("value out of range");
      float f = static_cast<float>(v);
      if (is_nan && nan_payload != 0) {
        uint32_t bits = (std::signbit(v) ? 0x80000000u : 0) | 0x7f800000u |
                        static_cast<uint32_t>(nan_payload & 0x7fffff);
        f = std::bit_cast<float>(bits);
      }
      push(f);
      return Ok();
    }
    default:
      break;
  }
  const FloatFormat* fmt = NarrowFloatFormat(type);
  if (fmt == nullptr) return bad("unsupported element type");
  if (!finite_input && std::isinf(v) && !fmt->has_inf) return bad("no infinity");
  if (std::isnan(v) && fmt->nan == FloatFormat::Nan::kNone) return bad("no NaN");
  // f16/bf16 round through float as XLA's Eigen types do.
  double rounded = fmt->total_bits == 16 ? static_cast<double>(static_cast<float>(v)) : v;
  uint32_t bits = EncodeNarrowFloat(*fmt, rounded);
  if (finite_input && !std::isfinite(DecodeNarrowFloat(*fmt, bits))) return bad("value out of range");
  if (fmt->total_bits == 16) {
    push(static_cast<uint16_t>(bits));
  } else {
    push(static_cast<uint8_t>(bits));
  }
  return Ok();
}

Status AppendScalar(TokenCursor& cur, PrimitiveType type, std::vector<uint8_t>& data) {
  if (!IsComplex(type)) return AppendElement(cur, type, data);
  PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
  KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kLparen, "'(' opening a complex value"));
  KILN_RETURN_IF_ERROR(AppendElement(cur, part, data));
  KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kComma, "',' in complex value"));
  KILN_RETURN_IF_ERROR(AppendElement(cur, part, data));
  return cur.Expect(TokKind::kRparen, "')' closing a complex value");
}

// One nesting level of a dense literal: '{' (level | scalar) (',' ...)* '}'.
Status ParseDenseLevel(TokenCursor& cur, const Shape& shape, int64_t dim,
                       std::vector<uint8_t>& data) {
  Token open = cur.tok();
  KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kLbrace, "'{' opening literal dimension " + std::to_string(dim)));
  int64_t count = 0;
  const bool innermost = dim + 1 == shape.rank();
  while (!cur.Is(TokKind::kRbrace)) {
    if (innermost) {
      KILN_RETURN_IF_ERROR(AppendScalar(cur, shape.element_type(), data));
    } else {
      KILN_RETURN_IF_ERROR(ParseDenseLevel(cur, shape, dim + 1, data));
    }
    ++count;
    if (!cur.Accept(TokKind::kComma) && !cur.Is(TokKind::kRbrace)) {
      return std::unexpected(cur.Expected("',' or '}' in literal"));
    }
  }
  cur.Advance();
  int64_t want = shape.dimensions(dim);
  if (count != want) {
    return std::unexpected(cur.ErrorAt(
        open, "literal dimension " + std::to_string(dim) + " has " + std::to_string(count) +
                  " elements but shape " + shape.ToString() + " needs " + std::to_string(want)));
  }
  return Ok();
}

}  // namespace

Result<Literal> ParseLiteralValue(TokenCursor& cur, const Shape& shape, int depth) {
  if (depth > kMaxNesting) {
    return std::unexpected(cur.ErrorAt(cur.tok(), "literal nested too deeply (tuples nest at most " +
                                                      std::to_string(kMaxNesting) + " deep)"));
  }
  if (shape.IsTuple()) {
    KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kLparen, "'(' opening a tuple literal"));
    std::vector<Literal> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      if (i > 0) KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kComma, "',' in tuple literal"));
      KILN_ASSIGN_OR_RETURN(Literal e, ParseLiteralValue(cur, shape.tuple_shapes(i), depth + 1));
      elements.push_back(std::move(e));
    }
    KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kRparen, "')' closing a tuple literal"));
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) {
    return std::unexpected(cur.ErrorAt(cur.tok(), "no literal of shape " + shape.ToString()));
  }
  if (shape.ElementCount() < 0) {
    return std::unexpected(cur.ErrorAt(cur.tok(), "literal shape " + shape.ToString() + " is too large"));
  }
  std::vector<uint8_t> data;
  if (shape.rank() == 0) {
    KILN_RETURN_IF_ERROR(AppendScalar(cur, shape.element_type(), data));
  } else {
    if (cur.Is(TokKind::kLbrace) && cur.PeekNext().kind == TokKind::kDots) {
      cur.Advance();
      cur.Advance();
      KILN_RETURN_IF_ERROR(cur.Expect(TokKind::kRbrace, "'}' after '...'"));
      return Literal::Elided(shape);
    }
    KILN_RETURN_IF_ERROR(ParseDenseLevel(cur, shape, 0, data));
  }
  return Literal::FromData(shape, std::move(data));
}

Result<Literal> ParseShapedLiteral(TokenCursor& cur, int depth) {
  if (depth > kMaxNesting) {
    return std::unexpected(cur.ErrorAt(cur.tok(), "literal nested too deeply (tuples nest at most " +
                                                      std::to_string(kMaxNesting) + " deep)"));
  }
  if (cur.Is(TokKind::kLparen)) {
    cur.Advance();
    std::vector<Literal> elements;
    while (!cur.Is(TokKind::kRparen)) {
      KILN_ASSIGN_OR_RETURN(Literal e, ParseShapedLiteral(cur, depth + 1));
      elements.push_back(std::move(e));
      if (!cur.Accept(TokKind::kComma) && !cur.Is(TokKind::kRparen)) {
        return std::unexpected(cur.Expected("',' or ')' in tuple literal"));
      }
    }
    cur.Advance();
    return Literal::Tuple(std::move(elements));
  }
  // "f32[2] {1, 2}": the '{' after the shape may open a layout or the value.
  // Take it as a layout only if a value still follows it.
  TokenCursor::Mark before = cur.Save();
  Result<Shape> with_layout = ParseShapeTokens(cur, depth + 1);
  bool value_follows = cur.Is(TokKind::kLbrace) || (with_layout && with_layout->rank() == 0 &&
                                                    !cur.Is(TokKind::kEof) && !cur.Is(TokKind::kComma) &&
                                                    !cur.Is(TokKind::kRparen));
  if (!with_layout || !value_follows) {
    cur.Restore(before);
    KILN_ASSIGN_OR_RETURN(Shape shape, ParseShapeTokens(cur, depth + 1, /*allow_layout=*/false));
    return ParseLiteralValue(cur, shape, depth + 1);
  }
  return ParseLiteralValue(cur, *with_layout, depth + 1);
}

}  // namespace kiln::hlo
