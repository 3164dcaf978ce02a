// dense<...> : type constants of MLIR text: hex blobs ("0x..."), splats and
// nested lists of integers, floats (or their bits as hex), booleans and
// complex pairs, decoded into an HLO literal of the constant's type.
#include <charconv>
#include <cmath>
#include <cstring>

#include "compiler/hlo/float_formats.h"
#include "compiler/stablehlo/dense_elements.h"
#include "compiler/stablehlo/text_parser_internal.h"

namespace kiln::stablehlo::text_internal {
namespace {

using hlo::PrimitiveType;

int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One element written in a list: a number, a boolean or a complex pair.
using Scalar = WrittenValue;

class DenseReader {
 public:
  DenseReader(Parser& p, hlo::PrimitiveType element) : p_(p), element_(element) {}

  Result<Scalar> ReadScalar() {
    Scalar s;
    if (p_.IsBare("true") || p_.IsBare("false")) {
      s.u = p_.IsBare("true") ? 1 : 0;
      s.f = static_cast<double>(s.u);
      p_.Advance();
      return s;
    }
    if (p_.Is(Tok::kLParen)) {  // (re, im)
      p_.Advance();
      KILN_ASSIGN_OR_RETURN(Scalar re, ReadScalar());
      KILN_RETURN_IF_ERROR(p_.Expect(Tok::kComma, "in a complex value"));
      KILN_ASSIGN_OR_RETURN(Scalar im, ReadScalar());
      KILN_RETURN_IF_ERROR(p_.Expect(Tok::kRParen, "after a complex value"));
      re.im_is_float = im.is_float;
      re.im_is_bits = im.is_bits;
      re.im = im.f;
      re.im_u = im.u;
      return re;
    }
    const bool negative = p_.Consume(Tok::kMinus);
    const Token t = p_.tok();
    if (t.kind == Tok::kFloat) {
      auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), s.f);
      if (ec != std::errc() && ec != std::errc::result_out_of_range) return p_.ErrorAt(t, "bad float");
      if (ec == std::errc::result_out_of_range) s.f = s.f == 0 ? 0.0 : INFINITY;
      s.is_float = true;
      if (negative) s.f = -s.f;
      p_.Advance();
      return s;
    }
    if (t.kind == Tok::kBareId && (t.text == "inf" || t.text == "nan")) {
      s.is_float = true;
      s.f = t.text == "inf" ? INFINITY : NAN;
      if (negative) s.f = -s.f;
      p_.Advance();
      return s;
    }
    if (t.kind != Tok::kInteger) return p_.Expected("a constant element");
    const bool hex = t.text.size() > 2 && t.text[1] == 'x';
    auto [ptr, ec] = hex ? std::from_chars(t.text.data() + 2, t.text.data() + t.text.size(), s.u, 16)
                         : std::from_chars(t.text.data(), t.text.data() + t.text.size(), s.u);
    if (ec != std::errc()) return p_.ErrorAt(t, "integer out of range");
    if (negative) s.u = 0 - s.u;
    s.is_bits = hex && !negative;
    s.f = negative ? -static_cast<double>(0 - s.u) : static_cast<double>(s.u);
    p_.Advance();
    return s;
  }

  // Reads a nested list of `dims` (from dimension `d` on), appending
  // elements to `out`.
  Status ReadList(std::span<const int64_t> dims, size_t d, std::vector<Scalar>& out) {
    if (d == dims.size()) {
      KILN_ASSIGN_OR_RETURN(Scalar s, ReadScalar());
      out.push_back(s);
      return Ok();
    }
    KILN_RETURN_IF_ERROR(p_.Expect(Tok::kLSquare, "in a dense constant"));
    int64_t n = 0;
    while (!p_.Is(Tok::kRSquare)) {
      if (n >= dims[d]) return p_.ErrorHere("too many elements in dimension " + std::to_string(d));
      KILN_RETURN_IF_ERROR(ReadList(dims, d + 1, out));
      ++n;
      if (!p_.Consume(Tok::kComma)) break;
    }
    if (n != dims[d]) {
      return p_.ErrorHere("dimension " + std::to_string(d) + " has " + std::to_string(n) + " elements, the type " +
                          std::to_string(dims[d]));
    }
    return p_.Expect(Tok::kRSquare, "in a dense constant");
  }

 private:
  Parser& p_;
  hlo::PrimitiveType element_;
};

}  // namespace

Result<const Attr*> Parser::ParseDense() {
  const Token at = tok_;
  Advance();  // dense
  KILN_RETURN_IF_ERROR(Expect(Tok::kLess, "after dense"));
  // The type follows the value: remember where the value is and read it
  // once the type is known.
  const Token body = tok_;
  const int body_depth = depth_;
  if (Is(Tok::kGreater)) {
    // dense<> : an empty constant.
  } else {
    int nesting = 0;
    while (true) {
      if (Is(Tok::kEof) || Is(Tok::kError)) return ErrorAt(at, "unterminated dense<...>");
      if (Is(Tok::kLSquare) || Is(Tok::kLParen)) ++nesting;
      if (Is(Tok::kRSquare) || Is(Tok::kRParen)) --nesting;
      if (Is(Tok::kGreater) && nesting <= 0) break;
      Advance();
    }
  }
  const uint32_t end = tok_.offset;
  Advance();  // >
  KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "after dense<...>"));
  KILN_ASSIGN_OR_RETURN(TypeId type, ParseType());
  const Token after = tok_;
  const TypeInfo& info = module_.types()[type];
  if (info.kind != TypeKind::kTensor || info.unranked) return ErrorAt(at, "a dense constant needs a ranked tensor type");
  int64_t count = 1;
  for (int64_t d : info.dims) {
    if (d == kDynamic) return ErrorAt(at, "a dense constant needs a static shape");
    if (d != 0 && count > kMaxConstantBytes / d) return ErrorAt(at, "dense constant too large");
    count *= d;
  }
  const PrimitiveType element = info.element;
  const int width = hlo::HostByteWidth(element);
  if (count > kMaxConstantBytes / std::max(width, 1)) return ErrorAt(at, "dense constant too large");
  Attr* a = NewAttr(Attr::Kind::kDense);
  a->type = type;
  hlo::Shape shape(element, info.dims);

  if (body.kind == Tok::kString && end == body.offset + body.text.size()) {
    // "0x...": raw little-endian element bytes, or one element for a splat.
    std::string_view hex = body.text.substr(1, body.text.size() - 2);
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X')) {
      return ErrorAt(body, "expected a hex string \"0x...\"");
    }
    hex.remove_prefix(2);
    if (hex.size() % 2 != 0) return ErrorAt(body, "odd number of hex digits");
    std::vector<uint8_t> bytes(hex.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i) {
      const int hi = HexNibble(hex[2 * i]);
      const int lo = HexNibble(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) return ErrorAt(body, "bad hex digit");
      bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    Result<hlo::Literal> lit = LiteralFromRawBytes(shape, bytes, &a->splat);
    if (!lit) return ErrorAt(body, lit.error().message);
    a->literal = std::make_shared<hlo::Literal>(std::move(*lit));
    return a;
  }

  // Values: re-read the body now that the element type is known.
  const Token resume = after;
  SeekToToken(body);
  DenseReader reader(*this, element);
  std::vector<Scalar> scalars;
  if (body.kind == Tok::kGreater) {
    if (count != 0) return ErrorAt(at, "empty dense<> for a non-empty type");
  } else if (Is(Tok::kLSquare) && !info.dims.empty()) {
    scalars.reserve(static_cast<size_t>(count));
    KILN_RETURN_IF_ERROR(reader.ReadList(info.dims, 0, scalars));
  } else if (Is(Tok::kLSquare) && Peek().kind == Tok::kRSquare) {
    Advance();
    Advance();
  } else {
    KILN_ASSIGN_OR_RETURN(Scalar s, reader.ReadScalar());
    scalars.push_back(s);
    a->splat = true;
  }
  if (tok_.offset != end) return ErrorHere("unexpected text in dense<...>");
  depth_ = body_depth;
  hlo::Literal lit = a->splat ? hlo::Literal(hlo::Shape(element, {}))
                              : hlo::Literal::Uninitialized(std::move(shape));
  for (size_t i = 0; i < scalars.size(); ++i) {
    const Scalar& s = scalars[i];
    Status set = SetLiteralElement(lit, static_cast<int64_t>(i), s);
    if (!set) return ErrorAt(body, set.error().message);
  }
  a->literal = std::make_shared<hlo::Literal>(std::move(lit));
  SeekToToken(resume);
  return a;
}

}  // namespace kiln::stablehlo::text_internal
