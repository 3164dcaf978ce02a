// Parsers for shapes and literals over a TokenCursor; used by the module
// parser and by ParseShape/ParseLiteral. Errors carry file:line:col.
// Recursion (tuples) is bounded by kMaxNesting. Not thread-safe per cursor.
#pragma once

#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "compiler/hlo/token_cursor.h"

namespace kiln::hlo {

inline constexpr int kMaxNesting = 64;

// True when the current token starts an array shape (a primitive type name
// followed by '[').
bool AtArrayShape(const TokenCursor& cur);

// With allow_layout false a '{' after the dimensions is left unread.
Result<Shape> ParseShapeTokens(TokenCursor& cur, int depth = 0, bool allow_layout = true);

// A literal value for a known shape: "{1, 2}", "3", "(1, {2})", "{...}".
Result<Literal> ParseLiteralValue(TokenCursor& cur, const Shape& shape, int depth = 0);

// A literal with its own shape: "f32[2] {1, 2}", "(f32[] 1, s32[] 2)".
Result<Literal> ParseShapedLiteral(TokenCursor& cur, int depth = 0);

}  // namespace kiln::hlo
