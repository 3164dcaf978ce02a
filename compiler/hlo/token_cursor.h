// A token stream with one token of lookahead and error messages that name
// file, line and column. Shared by the module parser and the shape/literal
// parsers. Not thread-safe; one per parse.
#pragma once

#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/status.h"
#include "compiler/hlo/lexer.h"

namespace kiln::hlo {

class TokenCursor {
 public:
  TokenCursor(std::string_view text, std::string_view filename)
      : lexer_(text), filename_(filename) {
    tok_ = lexer_.Next();
  }

  const Token& tok() const { return tok_; }
  TokKind kind() const { return tok_.kind; }
  void Advance() {
    consumed_end_ = lexer_.position();
    LexInto();
  }
  // Byte offset just past the last token consumed (0 before any).
  uint32_t consumed_end() const { return consumed_end_; }
  // Consumes everything up to byte `offset` of the source, which must be
  // past the current token's start and on a token boundary (the parser's
  // shape cache uses it to step over text it has read before).
  void SkipTo(uint32_t offset) {
    lexer_.Seek(offset);
    consumed_end_ = offset;
    LexInto();
  }
  // The token after the current one, without consuming anything.
  Token PeekNext() const {
    Lexer copy = lexer_;
    return copy.Next();
  }
  // Saves and restores the position, for the parser's rare backtracking.
  struct Mark {
    Lexer lexer;
    Token tok;
    uint32_t consumed_end;
  };
  Mark Save() const { return {lexer_, tok_, consumed_end_}; }
  void Restore(const Mark& m) {
    lexer_ = m.lexer;
    tok_ = m.tok;
    consumed_end_ = m.consumed_end;
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
  // "file:line:col: <message>" at the given token or byte offset.
  Error ErrorAt(const Token& t, std::string_view message) const { return ErrorAt(t.offset, message); }
  Error ErrorAt(uint32_t offset, std::string_view message) const;

  // Reads the brace group starting at the current '{' verbatim (strings
  // skipped) and advances past it.
  Result<std::string_view> RawBraced();

  std::string_view filename() const { return filename_; }
  std::string_view source() const { return lexer_.source(); }

 private:
  // tok_ = lexer_.Next(), with the lexer building the token in place: an
  // assignment would copy a just-written temporary with wide loads that
  // miss store forwarding, which showed as a quarter of the parser's own
  // time. Token is trivially destructible, so reusing its storage is fine.
  void LexInto() {
    static_assert(std::is_trivially_destructible_v<Token>);
    ::new (&tok_) Token(lexer_.Next());
  }

  Lexer lexer_;
  Token tok_;
  uint32_t consumed_end_ = 0;
  std::string_view filename_;
};

// Describes a token for error messages: "'foo'", "end of file".
std::string DescribeToken(const Token& t, const Lexer* lexer = nullptr);

}  // namespace kiln::hlo
