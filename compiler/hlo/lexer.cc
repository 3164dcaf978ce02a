#include "compiler/hlo/lexer.h"

#include <algorithm>

namespace kiln::hlo {
namespace {

constexpr size_t kNoMatch = static_cast<size_t>(-1);

// Matchers: each returns the end of the longest match starting at p, or
// kNoMatch. They follow the regular expressions of XLA's lexer.
size_t Digits(std::string_view s, size_t p) {
  size_t q = p;
  while (q < s.size() && IsDigit(s[q])) ++q;
  return q == p ? kNoMatch : q;
}

// [-]?((\d+|\d+\.\d*|\d*\.\d+)[eE][+-]?\d+)|[-]?(\d+\.\d*|\d*\.\d+)
size_t MatchDecimal(std::string_view s, size_t p) {
  size_t q = p;
  if (q < s.size() && s[q] == '-') ++q;
  size_t int_end = Digits(s, q);
  bool has_int = int_end != kNoMatch;
  if (has_int) q = int_end;
  bool has_frac_point = false;
  if (q < s.size() && s[q] == '.') {
    size_t frac_end = Digits(s, q + 1);
    if (frac_end != kNoMatch) {
      q = frac_end;
      has_frac_point = true;
    } else if (has_int) {
      q = q + 1;  // "1."
      has_frac_point = true;
    }
  }
  if (!has_int && !has_frac_point) return kNoMatch;
  if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
    size_t e = q + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    size_t exp_end = Digits(s, e);
    if (exp_end != kNoMatch) return exp_end;
  }
  return has_frac_point ? q : kNoMatch;
}

// [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t MatchDimLabels(std::string_view s, size_t p) {
  auto run = [&](size_t q, std::string_view letters) {
    size_t start = q;
    while (q < s.size() && (IsDigit(s[q]) || s[q] == '?' ||
                            letters.find(s[q]) != std::string_view::npos)) {
      ++q;
    }
    return q - start >= 2 ? q : kNoMatch;
  };
  size_t q = run(p, "bf");
  if (q == kNoMatch || q >= s.size() || s[q] != '_') return kNoMatch;
  q = run(q + 1, "io");
  if (q == kNoMatch || s.substr(q, 2) != "->") return kNoMatch;
  return run(q + 2, "bf");
}

// [0-9]+(x[0-9]+)+
size_t MatchDxD(std::string_view s, size_t p) {
  size_t q = Digits(s, p);
  if (q == kNoMatch) return kNoMatch;
  int groups = 0;
  while (q < s.size() && s[q] == 'x') {
    size_t next = Digits(s, q + 1);
    if (next == kNoMatch) break;
    q = next;
    ++groups;
  }
  return groups > 0 ? q : kNoMatch;
}

// [-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?(x[-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?)*
size_t MatchPad(std::string_view s, size_t p) {
  auto signed_digits = [&](size_t q) {
    if (q < s.size() && s[q] == '-') ++q;
    return Digits(s, q);
  };
  auto one = [&](size_t q) -> size_t {
    q = signed_digits(q);
    if (q == kNoMatch || q >= s.size() || s[q] != '_') return kNoMatch;
    q = signed_digits(q + 1);
    if (q == kNoMatch) return kNoMatch;
    if (q < s.size() && s[q] == '_') {
      size_t interior = Digits(s, q + 1);
      if (interior != kNoMatch) q = interior;
    }
    return q;
  };
  size_t q = one(p);
  if (q == kNoMatch) return kNoMatch;
  while (q < s.size() && s[q] == 'x') {
    size_t next = one(q + 1);
    if (next == kNoMatch) break;
    q = next;
  }
  return q;
}

// nan or nan(0x<hex>) at p; returns end or kNoMatch.
size_t MatchNan(std::string_view s, size_t p) {
  if (p >= s.size() || s[p] != 'n' || s.substr(p, 3) != "nan") return kNoMatch;
  size_t q = p + 3;
  if (q < s.size() && IsIdentChar(s[q]) ) return kNoMatch;
  if (s.substr(q, 3) == "(0x") {
    size_t h = q + 3;
    size_t start = h;
    while (h < s.size() && isxdigit(static_cast<unsigned char>(s[h]))) ++h;
    if (h > start && h < s.size() && s[h] == ')') return h + 1;
  }
  return q;
}

}  // namespace

const char* TokKindName(TokKind kind) {
  switch (kind) {
    case TokKind::kEof: return "end of file";
    case TokKind::kError: return "error";
    case TokKind::kEqual: return "'='";
    case TokKind::kComma: return "','";
    case TokKind::kColon: return "':'";
    case TokKind::kAsterisk: return "'*'";
    case TokKind::kQuestion: return "'?'";
    case TokKind::kOctothorp: return "'#'";
    case TokKind::kPlus: return "'+'";
    case TokKind::kTilde: return "'~'";
    case TokKind::kLsquare: return "'['";
    case TokKind::kRsquare: return "']'";
    case TokKind::kLbrace: return "'{'";
    case TokKind::kRbrace: return "'}'";
    case TokKind::kLparen: return "'('";
    case TokKind::kRparen: return "')'";
    case TokKind::kDots: return "'...'";
    case TokKind::kArrow: return "'->'";
    case TokKind::kLeq: return "'<='";
    case TokKind::kPercentName: return "name";
    case TokKind::kNameColon: return "parameter name";
    case TokKind::kAttributeName: return "attribute name";
    case TokKind::kIdent: return "identifier";
    case TokKind::kInt: return "integer";
    case TokKind::kDecimal: return "decimal";
    case TokKind::kNegInf: return "'-inf'";
    case TokKind::kString: return "string";
    case TokKind::kDimLabels: return "dim labels";
    case TokKind::kDxD: return "window size";
    case TokKind::kPad: return "padding";
  }
  return "token";
}

Token Lexer::Make(TokKind kind, size_t start, size_t end) {
  pos_ = end;
  Token t;
  t.kind = kind;
  t.text = src_.substr(start, end - start);
  t.offset = static_cast<uint32_t>(start);
  t.line = token_line_;
  t.space_before = space_before_;
  t.newline_before = newline_before_;
  return t;
}

Token Lexer::Fail(size_t at, std::string message) {
  failed_ = true;
  error_ = std::move(message);
  pos_ = at;
  Token t;
  t.kind = TokKind::kError;
  t.offset = static_cast<uint32_t>(at);
  return t;
}

bool Lexer::SkipSpaceAndComments() {
  space_before_ = false;
  newline_before_ = false;
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (c == '\n') {
        newline_before_ = true;
        ++line_;
      }
      space_before_ = true;
      ++pos_;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      size_t nl = src_.find('\n', pos_);
      pos_ = nl == std::string_view::npos ? src_.size() : nl;
      space_before_ = true;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '*') {
      size_t close = src_.find("*/", pos_ + 2);
      if (close == std::string_view::npos) return false;
      for (size_t i = pos_; i < close; ++i) {
        if (src_[i] == '\n') {
          newline_before_ = true;
          ++line_;
        }
      }
      pos_ = close + 2;
      space_before_ = true;
    } else {
      break;
    }
  }
  return true;
}

Token Lexer::Next() {
  if (failed_) return Fail(pos_, error_);
  size_t comment_start = pos_;
  // Most tokens follow another directly; only then is skipping a no-op.
  const char first = pos_ < src_.size() ? src_[pos_] : ' ';
  if (first != ' ' && first != '\n' && first != '\t' && first != '\r' && first != '/') {
    space_before_ = false;
    newline_before_ = false;
  } else if (!SkipSpaceAndComments()) {
    return Fail(comment_start, "unterminated /* comment");
  }
  token_line_ = line_;
  if (pos_ >= src_.size()) return Make(TokKind::kEof, pos_, pos_);
  size_t start = pos_;
  char c = src_[pos_];
  auto single = [&](TokKind k) { return Make(k, start, start + 1); };
  switch (c) {
    case '=': return single(TokKind::kEqual);
    case ',': return single(TokKind::kComma);
    case ':': return single(TokKind::kColon);
    case '*': return single(TokKind::kAsterisk);
    case '#': return single(TokKind::kOctothorp);
    case '+': return single(TokKind::kPlus);
    case '~': return single(TokKind::kTilde);
    case '[': return single(TokKind::kLsquare);
    case ']': return single(TokKind::kRsquare);
    case '{': return single(TokKind::kLbrace);
    case '}': return single(TokKind::kRbrace);
    case '(': return single(TokKind::kLparen);
    case ')': return single(TokKind::kRparen);
    case '"': return LexString(start);
    case '.':
      if (src_.substr(start, 3) == "...") return Make(TokKind::kDots, start, start + 3);
      return Fail(start, "unexpected '.'");
    case '<':
      if (src_.substr(start, 2) == "<=") return Make(TokKind::kLeq, start, start + 2);
      return Fail(start, "unexpected '<'");
    case '%': {
      size_t q = start + 1;
      if (q >= src_.size() || !IsIdentStart(src_[q])) {
        return Fail(start, "expected a name after '%'");
      }
      while (q < src_.size() && IsIdentChar(src_[q])) ++q;
      Token t = Make(TokKind::kPercentName, start, q);
      t.text.remove_prefix(1);
      return t;
    }
    case '/':
      return Fail(start, "unexpected '/'");
    default:
      break;
  }
  if (c == '-' && src_.substr(start, 2) == "->") return Make(TokKind::kArrow, start, start + 2);
  if (IsDigit(c) || c == '-' || c == '?') return LexNumberOrPattern(start);
  if (IsIdentStart(c)) return LexIdentifier(start);
  if (c == '\0') return Fail(start, "unexpected NUL byte");
  // Printable ASCII as itself, any other byte as \xHH.
  static constexpr char kHexDigits[] = "0123456789abcdef";
  const auto byte = static_cast<unsigned char>(c);
  const std::string shown = byte >= 0x20 && byte < 0x7f
                                ? std::string(1, c)
                                : std::string{'\\', 'x', kHexDigits[byte >> 4], kHexDigits[byte & 15]};
  return Fail(start, "unexpected character '" + shown + "'");
}

Token Lexer::LexIdentifier(size_t start) {
  if (src_[start] == 'b' || src_[start] == 'f') {
    size_t dl = MatchDimLabels(src_, start);
    if (dl != kNoMatch) return Make(TokKind::kDimLabels, start, dl);
  }
  size_t nan_end = MatchNan(src_, start);
  if (nan_end != kNoMatch) return Make(TokKind::kDecimal, start, nan_end);
  size_t q = start + 1;
  while (q < src_.size() && IsIdentChar(src_[q])) ++q;
  if (q < src_.size() && src_[q] == ':') {
    Token t = Make(TokKind::kNameColon, start, q + 1);
    t.text.remove_suffix(1);
    return t;
  }
  if (q < src_.size() && src_[q] == '=' && !(q + 1 < src_.size() && src_[q + 1] == '=')) {
    Token t = Make(TokKind::kAttributeName, start, q + 1);
    t.text.remove_suffix(1);
    return t;
  }
  return Make(TokKind::kIdent, start, q);
}

Token Lexer::LexNumberOrPattern(size_t start) {
  // Fast path for the commonest token, a plain integer: digits followed by
  // none of the characters that continue a decimal, window, padding or
  // dim-labels pattern.
  if (IsDigit(src_[start])) {
    size_t q = start + 1;
    while (q < src_.size() && IsDigit(src_[q])) ++q;
    if (q == src_.size()) return Make(TokKind::kInt, start, q);
    switch (src_[q]) {
      case '.': case 'e': case 'E': case '_': case 'x': case 'b': case 'f': case 'i': case 'o':
      case '?':
        break;
      default:
        if (!IsIdentChar(src_[q])) return Make(TokKind::kInt, start, q);
        break;
    }
  }
  size_t end = MatchDecimal(src_, start);
  if (end != kNoMatch) return Make(TokKind::kDecimal, start, end);
  end = MatchDimLabels(src_, start);
  if (end != kNoMatch) return Make(TokKind::kDimLabels, start, end);
  end = MatchDxD(src_, start);
  if (end != kNoMatch) return Make(TokKind::kDxD, start, end);
  end = MatchPad(src_, start);
  if (end != kNoMatch) return Make(TokKind::kPad, start, end);
  size_t q = start;
  if (src_[q] == '-') ++q;
  end = Digits(src_, q);
  if (end != kNoMatch) return Make(TokKind::kInt, start, end);
  if (src_.substr(start, 4) == "-inf" &&
      !(start + 4 < src_.size() && IsIdentChar(src_[start + 4]))) {
    return Make(TokKind::kNegInf, start, start + 4);
  }
  if (src_[start] == '-') {
    size_t nan_end = MatchNan(src_, start + 1);
    if (nan_end != kNoMatch) return Make(TokKind::kDecimal, start, nan_end);
  }
  if (src_[start] == '?') return Make(TokKind::kQuestion, start, start + 1);
  return Fail(start, "malformed number");
}

Token Lexer::LexString(size_t start) {
  size_t q = start + 1;
  while (q < src_.size()) {
    char c = src_[q];
    if (c == '\\') {
      if (q + 1 < src_.size() && src_[q + 1] == '\n') ++line_;
      q += 2;
      continue;
    }
    if (c == '"') return Make(TokKind::kString, start, q + 1);
    if (c == '\n') ++line_;
    ++q;
  }
  return Fail(start, "unterminated string");
}

void Lexer::Seek(size_t offset) {
  offset = std::min(offset, src_.size());
  for (; pos_ < offset; ++pos_) {
    if (src_[pos_] == '\n') ++line_;
  }
}

bool Lexer::RawBraced(const Token& open, std::string_view* out) {
  size_t q = open.offset;
  int depth = 0;
  while (q < src_.size()) {
    char c = src_[q];
    if (c == '"') {
      ++q;
      while (q < src_.size() && src_[q] != '"') {
        if (src_[q] == '\\') {
          if (q + 1 < src_.size() && src_[q + 1] == '\n') ++line_;
          q += 2;
        } else {
          if (src_[q] == '\n') ++line_;
          ++q;
        }
      }
      if (q >= src_.size()) break;
    } else if (c == '\n') {
      ++line_;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) {
        *out = src_.substr(open.offset, q + 1 - open.offset);
        pos_ = q + 1;
        return true;
      }
    }
    ++q;
  }
  return false;
}

LineColumn LocateOffset(std::string_view source, uint32_t offset) {
  if (offset > source.size()) offset = static_cast<uint32_t>(source.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

bool UnescapeString(std::string_view quoted, std::string* out) {
  out->clear();
  if (quoted.size() < 2) return false;
  std::string_view s = quoted.substr(1, quoted.size() - 2);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out->push_back(s[i]);
      continue;
    }
    if (++i >= s.size()) return false;
    char c = s[i];
    switch (c) {
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'r': out->push_back('\r'); break;
      case '\\': out->push_back('\\'); break;
      case '"': out->push_back('"'); break;
      case '\'': out->push_back('\''); break;
      case '?': out->push_back('?'); break;
      case 'a': out->push_back('\a'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'v': out->push_back('\v'); break;
      case 'x': {
        int v = 0, n = 0;
        while (i + 1 < s.size() && n < 2 && isxdigit(static_cast<unsigned char>(s[i + 1]))) {
          char h = s[++i];
          v = v * 16 + (IsDigit(h) ? h - '0' : (tolower(h) - 'a' + 10));
          ++n;
        }
        if (n == 0) return false;
        out->push_back(static_cast<char>(v));
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0', n = 1;
          while (i + 1 < s.size() && n < 3 && s[i + 1] >= '0' && s[i + 1] <= '7') {
            v = v * 8 + (s[++i] - '0');
            ++n;
          }
          out->push_back(static_cast<char>(v));
          break;
        }
        return false;
    }
  }
  return true;
}

}  // namespace kiln::hlo
