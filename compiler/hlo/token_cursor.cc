#include "compiler/hlo/token_cursor.h"

#include <algorithm>

namespace kiln::hlo {

std::string DescribeToken(const Token& t, const Lexer* lexer) {
  if (t.kind == TokKind::kEof) return "end of file";
  if (t.kind == TokKind::kError) {
    return lexer != nullptr ? "invalid text (" + lexer->error() + ")" : "invalid text";
  }
  std::string_view text = t.text;
  std::string shown(text.substr(0, std::min<size_t>(text.size(), 40)));
  if (text.size() > 40) shown += "...";
  std::string prefix = t.kind == TokKind::kPercentName ? "%" : "";
  std::string suffix = t.kind == TokKind::kAttributeName ? "="
                       : t.kind == TokKind::kNameColon   ? ":"
                                                         : "";
  return "'" + prefix + shown + suffix + "'";
}

Error TokenCursor::ErrorAt(uint32_t offset, std::string_view message) const {
  LineColumn lc = LocateOffset(lexer_.source(), offset);
  return InvalidArgumentError(std::string(message))
      .At({.file = std::string(filename_), .line = lc.line, .column = lc.column});
}

Error TokenCursor::Expected(std::string_view what) const {
  return ErrorAt(tok_, "expected " + std::string(what) + ", got " + DescribeToken(tok_, &lexer_));
}

Status TokenCursor::Expect(TokKind k, std::string_view what) {
  if (tok_.kind != k) return std::unexpected(Expected(what));
  Advance();
  return Ok();
}

Result<std::string_view> TokenCursor::RawBraced() {
  std::string_view out;
  if (tok_.kind != TokKind::kLbrace) return std::unexpected(Expected("'{'"));
  Token open = tok_;
  if (!lexer_.RawBraced(open, &out)) return std::unexpected(ErrorAt(open, "unbalanced '{'"));
  Advance();
  return out;
}

}  // namespace kiln::hlo
