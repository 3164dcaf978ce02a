// A byte-level scan that delimits a shape in HLO text without lexing it,
// for the parser's shape memo (text_memo.h).
//
// It returns the end offset of the text starting at `offset` only when a
// plain byte scan can delimit it AND the token parser's reading of those
// bytes cannot depend on what follows them; otherwise nullopt, and the
// parser reads the text through tokens and does not memoize it. The parser
// still checks, before inserting, that its token reading ended exactly at
// the scanned end. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace kiln::hlo {

// An array shape `type[dims]` with an optional layout written right after
// it, or a parenthesised tuple of shapes on one line; an array shape
// followed by whitespace and a '{' that opens a computation's body (a name
// or '}' follows it) ends before the '{'. Not delimited: buffer shapes,
// comments, a layout separated by whitespace, unbalanced text.
std::optional<size_t> ScanShapeExtent(std::string_view source, size_t offset);

}  // namespace kiln::hlo
