#include "compiler/stablehlo/text_lexer.h"

#include <cstring>

namespace kiln::stablehlo {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// bare-id ::= (letter|[_]) (letter|digit|[_$.])*
bool IsBareStart(char c) { return IsLetter(c) || c == '_'; }
bool IsBareChar(char c) { return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.'; }
// suffix-id ::= digit+ | (letter|[$._-]) (letter|digit|[$._-])*
bool IsSuffixChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '$' || c == '.' || c == '_' || c == '-';
}

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

std::string_view TokName(Tok t) {
  switch (t) {
    case Tok::kEof: return "end of input";
    case Tok::kError: return "invalid token";
    case Tok::kBareId: return "identifier";
    case Tok::kPercentId: return "%value";
    case Tok::kAtId: return "@symbol";
    case Tok::kCaretId: return "^block";
    case Tok::kHashId: return "#attribute";
    case Tok::kBangId: return "!type";
    case Tok::kInteger: return "integer";
    case Tok::kFloat: return "float";
    case Tok::kString: return "string";
    case Tok::kLParen: return "'('";
    case Tok::kRParen: return "')'";
    case Tok::kLBrace: return "'{'";
    case Tok::kRBrace: return "'}'";
    case Tok::kLSquare: return "'['";
    case Tok::kRSquare: return "']'";
    case Tok::kLess: return "'<'";
    case Tok::kGreater: return "'>'";
    case Tok::kComma: return "','";
    case Tok::kColon: return "':'";
    case Tok::kEqual: return "'='";
    case Tok::kArrow: return "'->'";
    case Tok::kQuestion: return "'?'";
    case Tok::kStar: return "'*'";
    case Tok::kPlus: return "'+'";
    case Tok::kMinus: return "'-'";
    case Tok::kVBar: return "'|'";
  }
  return "token";
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
      line_start_ = pos_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      const void* nl = std::memchr(text_.data() + pos_, '\n', text_.size() - pos_);
      pos_ = nl == nullptr ? text_.size() : static_cast<size_t>(static_cast<const char*>(nl) - text_.data());
    } else {
      return;
    }
  }
}

Token Lexer::Make(Tok kind, size_t start) const {
  Token t;
  t.kind = kind;
  t.text = text_.substr(start, pos_ - start);
  t.offset = static_cast<uint32_t>(start);
  t.line = line_;
  t.column = static_cast<int>(start - line_start_) + 1;
  return t;
}

Token Lexer::Fail(size_t start, std::string message) {
  error_ = std::move(message);
  if (pos_ == start && pos_ < text_.size()) ++pos_;
  return Make(Tok::kError, start);
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  const size_t start = pos_;
  if (pos_ >= text_.size()) return Make(Tok::kEof, start);
  const char c = text_[pos_];
  auto single = [&](Tok kind) {
    ++pos_;
    return Make(kind, start);
  };
  switch (c) {
    case '(': return single(Tok::kLParen);
    case ')': return single(Tok::kRParen);
    case '{': return single(Tok::kLBrace);
    case '}': return single(Tok::kRBrace);
    case '[': return single(Tok::kLSquare);
    case ']': return single(Tok::kRSquare);
    case '<': return single(Tok::kLess);
    case '>': return single(Tok::kGreater);
    case ',': return single(Tok::kComma);
    case ':': return single(Tok::kColon);
    case '=': return single(Tok::kEqual);
    case '?': return single(Tok::kQuestion);
    case '*': return single(Tok::kStar);
    case '+': return single(Tok::kPlus);
    case '|': return single(Tok::kVBar);
    case '-':
      if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
        pos_ += 2;
        return Make(Tok::kArrow, start);
      }
      return single(Tok::kMinus);
    case '"': return LexString(start);
    case '%': return LexPrefixed(Tok::kPercentId, start);
    case '@': return LexPrefixed(Tok::kAtId, start);
    case '^': return LexPrefixed(Tok::kCaretId, start);
    case '#': return LexPrefixed(Tok::kHashId, start);
    case '!': return LexPrefixed(Tok::kBangId, start);
    default: break;
  }
  if (IsDigit(c)) return LexNumber(start);
  if (IsBareStart(c)) {
    ++pos_;
    while (pos_ < text_.size() && IsBareChar(text_[pos_])) ++pos_;
    return Make(Tok::kBareId, start);
  }
  if (c == '\0') return Fail(start, "NUL byte in the text");
  return Fail(start, std::string("unexpected character '") + c + "'");
}

Token Lexer::LexNumber(size_t start) {
  if (text_[pos_] == '0' && pos_ + 2 < text_.size() && text_[pos_ + 1] == 'x' &&
      IsHexDigit(text_[pos_ + 2])) {
    pos_ += 2;
    while (pos_ < text_.size() && IsHexDigit(text_[pos_])) ++pos_;
    return Make(Tok::kInteger, start);
  }
  while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  if (pos_ >= text_.size() || text_[pos_] != '.') return Make(Tok::kInteger, start);
  ++pos_;
  while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    size_t p = pos_ + 1;
    if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
    if (p < text_.size() && IsDigit(text_[p])) {
      pos_ = p;
      while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    }
  }
  return Make(Tok::kFloat, start);
}

Token Lexer::LexString(size_t start) {
  ++pos_;
  while (pos_ < text_.size()) {
    const char* p = text_.data() + pos_;
    const size_t left = text_.size() - pos_;
    // Jump to the next quote or backslash.
    const void* q = std::memchr(p, '"', left);
    const void* b = std::memchr(p, '\\', q == nullptr ? left : static_cast<size_t>(static_cast<const char*>(q) - p));
    if (b != nullptr) {
      pos_ = static_cast<size_t>(static_cast<const char*>(b) - text_.data()) + 2;
      continue;
    }
    if (q == nullptr) break;
    const size_t end = static_cast<size_t>(static_cast<const char*>(q) - text_.data());
    // Keep line counting right for strings that span lines.
    for (size_t i = pos_; i < end; ++i) {
      if (text_[i] == '\n') {
        ++line_;
        line_start_ = i + 1;
      }
    }
    pos_ = end + 1;
    Token t = Make(Tok::kString, start);
    return t;
  }
  pos_ = text_.size();
  return Fail(start, "unterminated string");
}

Token Lexer::LexPrefixed(Tok kind, size_t start) {
  ++pos_;
  if (kind == Tok::kAtId && pos_ < text_.size() && text_[pos_] == '"') {
    Token s = LexString(pos_);
    if (s.kind == Tok::kError) return s;
    return Make(Tok::kAtId, start);
  }
  if (pos_ < text_.size() && IsDigit(text_[pos_])) {
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    return Make(kind, start);
  }
  const size_t name_start = pos_;
  while (pos_ < text_.size() && IsSuffixChar(text_[pos_])) ++pos_;
  if (pos_ == name_start) {
    // A lone '#' or '!' has no use in the programs read here.
    return Fail(start, std::string("expected a name after '") + text_[start] + "'");
  }
  return Make(kind, start);
}

bool DecodeMlirString(std::string_view token_text, std::string& out) {
  out.clear();
  if (token_text.size() < 2) return false;
  std::string_view body = token_text.substr(1, token_text.size() - 2);
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= body.size()) return false;
    const char e = body[++i];
    switch (e) {
      case '\\': out.push_back('\\'); break;
      case '"': out.push_back('"'); break;
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      default:
        if (i + 1 < body.size() && IsHexDigit(e) && IsHexDigit(body[i + 1])) {
          out.push_back(static_cast<char>(HexValue(e) * 16 + HexValue(body[i + 1])));
          ++i;
          break;
        }
        return false;
    }
  }
  return true;
}

}  // namespace kiln::stablehlo
