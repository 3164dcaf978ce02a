// HLO text parser (follows xla/hlo/parser/hlo_parser.cc).
//
// Produces a Module that owns everything it references; the input text is
// not retained. Errors name the file, line and column and say what was
// expected: "model.hlo:12:31: expected ')' after operands, got ','".
// Never crashes or hangs on malformed input: nesting depth is bounded and
// every loop consumes a token. Structure later walkers recurse over is
// bounded too: computations nest at most kMaxCallNesting calls deep
// (call_nesting.h; the error points at the call that goes deeper), and
// shapes, written or inferred, at most 64 tuples deep. Thread-safe (no
// shared state).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

Result<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                            std::string_view filename = "<input>");

// A shape on its own: "f32[2,3]{1,0}", "(s32[], bf16[4])".
Result<Shape> ParseShape(std::string_view text);

// Shapes separated by commas outside brackets: "s64[],f32[3,5]{1,0}" (a
// module's argument shapes, as `--arg-shapes` and the server's `arg_shapes`
// give them). Empty pieces are skipped; an error names the piece.
Result<std::vector<Shape>> ParseShapeList(std::string_view text);

// A literal with its shape, as in the corpus sidecars: "f32[2] {1, 2}",
// "s32[] 3", "(f32[1] {1}, pred[] true)".
Result<Literal> ParseLiteral(std::string_view text);

}  // namespace kiln::hlo
