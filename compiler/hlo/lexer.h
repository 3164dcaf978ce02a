// Tokenizer for HLO text (follows xla/hlo/parser/hlo_lexer.cc).
//
// The Lexer reads a caller-owned buffer that must outlive it and every token
// it returns (token text points into the buffer). Not thread-safe; one lexer
// per parse. It never reads past the end of the buffer and always makes
// progress, so malformed input ends in kError or kEof, never a hang.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::hlo {

// Character classes of HLO text, looked up by byte; shared with the
// parser's byte-level fast paths so that they agree with the lexer.
namespace lexer_internal {
enum : uint8_t { kDigitBit = 1, kIdentStartBit = 2, kIdentCharBit = 4 };
struct CharClasses {
  uint8_t bits[256] = {};
  constexpr CharClasses() {
    for (int c = '0'; c <= '9'; ++c) bits[c] = kDigitBit | kIdentCharBit;
    for (int c = 'a'; c <= 'z'; ++c) bits[c] = kIdentStartBit | kIdentCharBit;
    for (int c = 'A'; c <= 'Z'; ++c) bits[c] = kIdentStartBit | kIdentCharBit;
    bits[static_cast<int>('_')] = kIdentStartBit | kIdentCharBit;
    bits[static_cast<int>('.')] = kIdentCharBit;
    bits[static_cast<int>('-')] = kIdentCharBit;
  }
};
inline constexpr CharClasses kCharClasses;
}  // namespace lexer_internal

inline bool IsDigit(char c) {
  return lexer_internal::kCharClasses.bits[static_cast<uint8_t>(c)] & lexer_internal::kDigitBit;
}
// A character that can start an identifier or a %name: [A-Za-z_].
inline bool IsIdentStart(char c) {
  return lexer_internal::kCharClasses.bits[static_cast<uint8_t>(c)] &
         lexer_internal::kIdentStartBit;
}
// A character that can continue one: [A-Za-z0-9_.-].
inline bool IsIdentChar(char c) {
  return lexer_internal::kCharClasses.bits[static_cast<uint8_t>(c)] &
         lexer_internal::kIdentCharBit;
}

enum class TokKind : uint8_t {
  kEof,
  kError,
  kEqual,      // =
  kComma,      // ,
  kColon,      // :
  kAsterisk,   // *
  kQuestion,   // ?
  kOctothorp,  // #
  kPlus,       // +
  kTilde,      // ~
  kLsquare,
  kRsquare,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kDots,           // ...
  kArrow,          // ->
  kLeq,            // <=
  kPercentName,    // %name (text without '%')
  kNameColon,      // name: (text without ':')
  kAttributeName,  // name= (text without '=')
  kIdent,          // identifiers, keywords, opcodes, types, enum values
  kInt,
  kDecimal,        // 1.5, 1e5, nan, -nan, nan(0x7)
  kNegInf,         // -inf
  kString,         // "..." (text keeps the quotes and escapes)
  kDimLabels,      // b01f_01io->b01f
  kDxD,            // 3x3
  kPad,            // 0_1x1_1
};

const char* TokKindName(TokKind kind);

struct Token {
  std::string_view text;
  uint32_t offset = 0;  // byte offset of the token in the buffer
  uint32_t line = 1;    // 1-based line of its first byte
  TokKind kind = TokKind::kEof;
  bool space_before = false;  // whitespace or a comment precedes it
  bool newline_before = false;
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  // Returns the next token. After kEof or kError, keeps returning it.
  Token Next();

  // Scans a brace-balanced group starting at `open` (a kLbrace token just
  // returned by Next) without tokenizing its inside: strings are skipped so
  // braces inside them do not count. Returns the text from '{' to the
  // matching '}' inclusive and continues after it; returns false at EOF.
  bool RawBraced(const Token& open, std::string_view* out);

  // Continues lexing at byte `offset` (clamped to the end), which must not
  // be before the current position or fall inside a token. A failed lexer
  // stays failed.
  void Seek(size_t offset);

  // Byte offset just past the last token returned.
  uint32_t position() const { return static_cast<uint32_t>(pos_); }
  // Why the last kError token was produced.
  const std::string& error() const { return error_; }
  std::string_view source() const { return src_; }

 private:
  Token Make(TokKind kind, size_t start, size_t end);
  Token Fail(size_t at, std::string message);
  bool SkipSpaceAndComments();  // false on an unterminated comment
  Token LexIdentifier(size_t start);
  Token LexNumberOrPattern(size_t start);
  Token LexString(size_t start);

  std::string_view src_;
  size_t pos_ = 0;
  uint32_t line_ = 1;        // line at pos_ (newlines are counted as they are passed)
  uint32_t token_line_ = 1;  // line of the token being lexed
  bool space_before_ = false;
  bool newline_before_ = false;
  bool failed_ = false;
  std::string error_;
};

// 1-based line and column of a byte offset.
struct LineColumn {
  int line;
  int column;
};
LineColumn LocateOffset(std::string_view source, uint32_t offset);

// Undoes C escapes in the inside of a string token ("a\"b" -> a"b).
// Returns false on an invalid escape.
bool UnescapeString(std::string_view quoted, std::string* out);

}  // namespace kiln::hlo
