// A token stream with one token of lookahead and error messages that name
// file, line and column. Shared by the module parser and the shape/literal
// parsers. Not thread-safe; one per parse.
#pragma once

#include <string>
#include <string_view>

#include "compiler/hlo/lexer.h"
#include "compiler/hlo/status.h"

namespace kiln::hlo {

class TokenCursor {
 public:
  TokenCursor(std::string_view text, std::string_view filename)
      : lexer_(text), filename_(filename) {
    tok_ = lexer_.Next();
  }

  const Token& tok() const { return tok_; }
  TokKind kind() const { return tok_.kind; }
  void Advance() { tok_ = lexer_.Next(); }
  // The token after the current one, without consuming anything.
  Token PeekNext() const {
    Lexer copy = lexer_;
    return copy.Next();
  }
  // Saves and restores the position, for the parser's rare backtracking.
  struct Mark {
    Lexer lexer;
    Token tok;
  };
  Mark Save() const { return {lexer_, tok_}; }
  void Restore(const Mark& m) {
    lexer_ = m.lexer;
    tok_ = m.tok;
  }

  bool Is(TokKind k) const { return tok_.kind == k; }
  bool IsIdent(std::string_view text) const {
    return tok_.kind == TokKind::kIdent && tok_.text == text;
  }
  // Consumes the current token if it has kind k.
  bool Accept(TokKind k) {
    if (tok_.kind != k) return false;
    Advance();
    return true;
  }
  // Consumes a token of kind k or fails with "expected <what>".
  Status Expect(TokKind k, std::string_view what);

  // "file:line:col: expected <what>, got <current token>".
  Error Expected(std::string_view what) const;
  // "file:line:col: <message>" at the given token.
  Error ErrorAt(const Token& t, std::string_view message) const;

  // Reads the brace group starting at the current '{' verbatim (strings
  // skipped) and advances past it.
  Result<std::string_view> RawBraced();

  // 1-based line of a byte offset; offsets must be queried in increasing
  // order for O(total) cost (earlier offsets rescan from the start).
  int LineOf(uint32_t offset);

  std::string_view filename() const { return filename_; }
  std::string_view source() const { return lexer_.source(); }

 private:
  Lexer lexer_;
  Token tok_;
  std::string_view filename_;
  uint32_t line_offset_ = 0;
  int line_ = 1;
};

// Describes a token for error messages: "'foo'", "end of file".
std::string DescribeToken(const Token& t, const Lexer* lexer = nullptr);

}  // namespace kiln::hlo
