// Readers for the values of instruction and module attributes over a
// TokenCursor, used by the module parser: generic values kept as canonical
// text, raw values kept verbatim, and lists of names (computation
// references, control predecessors). Errors carry file:line:col. Not
// thread-safe per cursor.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/token_cursor.h"

namespace kiln::hlo {

// Tokens that can name an instruction or computation: %name or name.
inline bool IsNameToken(TokKind k) { return k == TokKind::kPercentName || k == TokKind::kIdent; }

// A generic value: the run of tokens up to a ',' outside brackets, a
// bracket closing something opened before the value, or the start of the
// next instruction. Writes its canonical text (attribute.h) to `out`,
// replacing what it held (a buffer the caller reuses).
Status ParseGenericAttributeValue(TokenCursor& cur, std::string& out);

// Appends token `t` to canonical text whose last token was of kind `prev`
// (kEof for none), with a space only where the text would otherwise lex
// differently ("a b", "a ->b"). Also used for layout items kept as text.
void AppendCanonicalToken(std::string& out, TokKind prev, const Token& t);

// A raw value ({...} or "..."), kept verbatim: a view into the input.
Result<std::string_view> ParseRawAttributeValue(TokenCursor& cur);

// A name or a braced list of names; *braced says which was written.
Result<std::vector<Token>> ParseNameList(TokenCursor& cur, bool* braced);

}  // namespace kiln::hlo
