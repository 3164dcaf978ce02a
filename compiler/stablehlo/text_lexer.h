// Tokenizer for MLIR text as StableHLO programs are written (MLIR's
// Lexer.cpp grammar: bare identifiers, %values, @symbols, ^blocks,
// #attributes and !types with their dialect prefixes, integers, floats,
// strings, punctuation; `//` comments skipped).
//
// Reads a caller-owned buffer that must outlive the lexer and the tokens it
// returns (token text points into it). Tracks the line and column of every
// token for error messages. Never reads past the end of the buffer and
// always makes progress, so malformed input ends in kError or kEof. Not
// thread-safe; one lexer per parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::stablehlo {

enum class Tok : uint8_t {
  kEof,
  kError,
  kBareId,     // func.func, tensor, f32, x
  kPercentId,  // %0, %arg1 (text includes '%'; a `#2` result index is a separate kHashId)
  kAtId,       // @main, @"quoted" (text includes '@')
  kCaretId,    // ^bb0
  kHashId,     // #stablehlo, #loc3, #2 (text includes '#')
  kBangId,     // !stablehlo.token, !quant.uniform (text includes '!')
  kInteger,    // 12, 0x7FC00000
  kFloat,      // 1.5, 2.0e-3
  kString,     // "..." (text includes the quotes; escapes not decoded)
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLSquare,
  kRSquare,
  kLess,
  kGreater,
  kComma,
  kColon,
  kEqual,
  kArrow,     // ->
  kQuestion,  // ?
  kStar,      // *
  kPlus,      // +
  kMinus,     // -
  kVBar,      // |
};

std::string_view TokName(Tok t);

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;
  uint32_t offset = 0;  // byte offset of the token's first character
  int line = 1;
  int column = 1;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token Next();
  // Byte offset just past the last token returned.
  uint32_t position() const { return static_cast<uint32_t>(pos_); }
  // Continues from `offset`, a position returned by position() or a token's
  // offset (so that line counting stays right, `line` and `line_start` are
  // those of that position).
  void Seek(uint32_t offset, int line, uint32_t line_start) {
    pos_ = offset <= text_.size() ? offset : text_.size();
    line_ = line;
    line_start_ = line_start;
  }
  int line() const { return line_; }
  uint32_t line_start() const { return static_cast<uint32_t>(line_start_); }
  std::string_view source() const { return text_; }
  // Set when Next() returned kError: what was wrong.
  const std::string& error() const { return error_; }

 private:
  void SkipSpaceAndComments();
  Token Make(Tok kind, size_t start) const;
  Token Fail(size_t start, std::string message);
  Token LexNumber(size_t start);
  Token LexString(size_t start);
  Token LexPrefixed(Tok kind, size_t start);

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::string error_;
};

// Decodes the escapes of an MLIR string token's text (quotes included):
// \\ \" \n \t and two-digit hex \XX. False on a malformed escape.
bool DecodeMlirString(std::string_view token_text, std::string& out);

}  // namespace kiln::stablehlo
