#include "compiler/hlo/attribute.h"

#include <array>
#include <charconv>

#include "compiler/hlo/lexer.h"

namespace kiln::hlo {
namespace {

constexpr std::array<std::string_view, 11> kComputationAttributes = {
    "to_apply", "calls", "condition", "body", "true_computation", "false_computation",
    "branch_computations", "called_computations", "select", "scatter", "async_wrapped"};

constexpr std::array<std::string_view, 5> kRawAttributes = {
    "metadata", "backend_config", "frontend_attributes", "statistics", "origin"};

constexpr std::array<std::string_view, 3> kNonSemanticAttributes = {"metadata", "statistics",
                                                                    "origin"};

template <size_t N>
bool ContainsName(const std::array<std::string_view, N>& set, std::string_view name) {
  for (std::string_view s : set) {
    if (s == name) return true;
  }
  return false;
}

Result<int64_t> TokenToInt(const Token& t) {
  if (t.kind != TokKind::kInt) {
    return InvalidArgumentError("expected an integer, got " + std::string(TokKindName(t.kind)));
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc()) {
    uint64_t u = 0;
    auto [ptr2, ec2] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), u);
    if (ec2 != std::errc()) return InvalidArgumentError("integer out of range: " + std::string(t.text));
    v = static_cast<int64_t>(u);
  }
  return v;
}

// Parses `{ int (, int)* }` from the lexer; the '{' must be next.
Result<std::vector<int64_t>> LexIntList(Lexer& lex) {
  Token t = lex.Next();
  if (t.kind != TokKind::kLbrace) return InvalidArgumentError("expected '{'");
  std::vector<int64_t> out;
  t = lex.Next();
  if (t.kind == TokKind::kRbrace) return out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(int64_t v, TokenToInt(t));
    out.push_back(v);
    t = lex.Next();
    if (t.kind == TokKind::kRbrace) return out;
    if (t.kind != TokKind::kComma) return InvalidArgumentError("expected ',' or '}' in integer list");
    t = lex.Next();
  }
}

}  // namespace

Attribute Attribute::Text(std::string_view name, std::string_view value) {
  Attribute a;
  a.name = name;
  a.value = value;
  return a;
}

Attribute Attribute::Calls(std::string_view name, Computation* callee) {
  Attribute a;
  a.name = name;
  a.kind = Kind::kComputations;
  a.computations.push_back(callee);
  return a;
}

bool IsComputationAttribute(std::string_view name) {
  return ContainsName(kComputationAttributes, name);
}
bool IsRawAttribute(std::string_view name) { return ContainsName(kRawAttributes, name); }
bool IsNonSemanticAttribute(std::string_view name) {
  return ContainsName(kNonSemanticAttributes, name);
}

Result<int64_t> DecodeInt(std::string_view text) {
  Lexer lex(text);
  Token t = lex.Next();
  KILN_ASSIGN_OR_RETURN(int64_t v, TokenToInt(t));
  if (lex.Next().kind != TokKind::kEof) return InvalidArgumentError("expected a single integer");
  return v;
}

Result<bool> DecodeBool(std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return InvalidArgumentError("expected true or false, got '" + std::string(text) + "'");
}

Result<std::vector<int64_t>> DecodeIntList(std::string_view text) {
  Lexer lex(text);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, LexIntList(lex));
  if (lex.Next().kind != TokKind::kEof) return InvalidArgumentError("unexpected text after integer list");
  return v;
}

Result<std::vector<std::vector<int64_t>>> DecodeIntListList(std::string_view text) {
  Lexer lex(text);
  std::vector<std::vector<int64_t>> out;
  if (lex.Next().kind != TokKind::kLbrace) return InvalidArgumentError("expected '{'");
  // Peek by re-lexing from the current position.
  while (true) {
    Lexer probe = lex;
    Token t = probe.Next();
    if (t.kind == TokKind::kRbrace) {
      lex = probe;
      break;
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> inner, LexIntList(lex));
    out.push_back(std::move(inner));
    t = lex.Next();
    if (t.kind == TokKind::kRbrace) break;
    if (t.kind != TokKind::kComma) return InvalidArgumentError("expected ',' or '}' in list of lists");
  }
  if (lex.Next().kind != TokKind::kEof) return InvalidArgumentError("unexpected text after list");
  return out;
}

Result<std::string> DecodeString(std::string_view text) {
  std::string out;
  if (text.size() < 2 || text.front() != '"' || text.back() != '"' ||
      !UnescapeString(text, &out)) {
    return InvalidArgumentError("expected a string, got '" + std::string(text) + "'");
  }
  return out;
}

}  // namespace kiln::hlo
