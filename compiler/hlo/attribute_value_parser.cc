#include "compiler/hlo/attribute_value_parser.h"

namespace kiln::hlo {
namespace {

bool IsWordToken(TokKind k) {
  switch (k) {
    case TokKind::kIdent: case TokKind::kInt: case TokKind::kDecimal: case TokKind::kNegInf:
    case TokKind::kString: case TokKind::kDimLabels: case TokKind::kDxD: case TokKind::kPad:
    case TokKind::kPercentName:
      return true;
    default:
      return false;
  }
}

bool StartsWord(TokKind k) {
  return IsWordToken(k) || k == TokKind::kNameColon || k == TokKind::kAttributeName;
}

}  // namespace

// Appends a token to canonical attribute text: a space only between two
// word-like tokens; '%' dropped from names (names and identifiers are
// interchangeable).
void AppendCanonicalToken(std::string& out, TokKind prev, const Token& t) {
  // Also kept apart, so that the text lexes the same again: a word and an
  // arrow or dots after it (names may hold '-' and '.': "a.3->b" would
  // lex as the name "a.3-"), and '=' after text ending in '=' ("x==").
  const bool word_then_punct = IsWordToken(prev) && (t.kind == TokKind::kArrow || t.kind == TokKind::kDots);
  const bool equals_twice = t.kind == TokKind::kEqual && !out.empty() && out.back() == '=';
  if ((IsWordToken(prev) && StartsWord(t.kind)) || word_then_punct || equals_twice) out += ' ';
  out += t.text;
  if (t.kind == TokKind::kAttributeName) out += '=';
  if (t.kind == TokKind::kNameColon) out += ':';
}

Status ParseGenericAttributeValue(TokenCursor& cur, std::string& out) {
  out.clear();
  int depth = 0;
  TokKind prev = TokKind::kEof;
  bool first = true;
  while (true) {
    const Token& t = cur.tok();
    switch (t.kind) {
      case TokKind::kError:
      case TokKind::kEof:
        if (depth > 0 || first) return std::unexpected(cur.Expected("an attribute value"));
        return Ok();
      case TokKind::kLbrace: case TokKind::kLsquare: case TokKind::kLparen:
        if (depth == 0 && !first && t.newline_before) return Ok();
        ++depth;
        break;
      case TokKind::kRbrace: case TokKind::kRsquare: case TokKind::kRparen:
        if (depth == 0) {
          if (first) return std::unexpected(cur.Expected("an attribute value"));
          return Ok();
        }
        --depth;
        break;
      case TokKind::kComma:
        if (depth == 0) {
          if (first) return std::unexpected(cur.Expected("an attribute value"));
          return Ok();
        }
        break;
      case TokKind::kEqual:
        // "name= =x": a value never starts with '=', and printed as
        // "name==x" it would not lex as an attribute again.
        if (first) return std::unexpected(cur.Expected("an attribute value"));
        break;
      default:
        if (depth == 0 && !first) {
          if (t.newline_before || t.kind == TokKind::kAttributeName ||
              (t.kind == TokKind::kIdent && t.text == "ROOT") ||
              (IsNameToken(t.kind) && cur.PeekNext().kind == TokKind::kEqual)) {
            return Ok();
          }
        }
        break;
    }
    AppendCanonicalToken(out, prev, t);
    prev = t.kind;
    first = false;
    cur.Advance();
  }
}

Result<std::string_view> ParseRawAttributeValue(TokenCursor& cur) {
  if (cur.Is(TokKind::kLbrace)) {
    return cur.RawBraced();
  }
  if (cur.Is(TokKind::kString)) {
    const std::string_view s = cur.tok().text;
    cur.Advance();
    return s;
  }
  return std::unexpected(cur.Expected("'{' or a string"));
}

Result<std::vector<Token>> ParseNameList(TokenCursor& cur, bool* braced) {
  std::vector<Token> out;
  *braced = cur.Accept(TokKind::kLbrace);
  if (!*braced) {
    if (!IsNameToken(cur.kind())) return std::unexpected(cur.Expected("a name"));
    out.push_back(cur.tok());
    cur.Advance();
    return out;
  }
  while (!cur.Is(TokKind::kRbrace)) {
    if (!IsNameToken(cur.kind())) return std::unexpected(cur.Expected("a name"));
    out.push_back(cur.tok());
    cur.Advance();
    if (!cur.Accept(TokKind::kComma) && !cur.Is(TokKind::kRbrace)) {
      return std::unexpected(cur.Expected("',' or '}' in name list"));
    }
  }
  cur.Advance();
  return out;
}

}  // namespace kiln::hlo
