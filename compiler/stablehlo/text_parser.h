// Reader of StableHLO programs in MLIR text: what jax.jit(f).lower(x)
// .as_text() prints and what StableHLO's tests write. Ops may be in their
// pretty or generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`), with
// regions, func.func / func.call / call, `#stablehlo<...>` and
// `#stablehlo.name<...>` attributes, `dense<...>` constants (hex, splats,
// nested lists), `array<i64: ...>`, type and attribute aliases, and
// locations (`loc(...)`, `#loc` aliases), which are read and ignored.
// Several top-level modules (split test files joined by `// -----`) are
// read into one module with all their functions.
//
// Errors name the input, line and column: "f.mlir:12:31: expected ')'".
// Never crashes or hangs on malformed input: nesting depth and sizes are
// bounded (a dense constant may not hold more than kMaxConstantBytes, a
// program no more than kMaxOperations ops) and every loop consumes input.
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo {

inline constexpr int64_t kMaxConstantBytes = int64_t{1} << 32;
inline constexpr int64_t kMaxOperations = int64_t{1} << 24;
inline constexpr int kMaxNesting = 256;

Result<MlirModule> ParseMlirText(std::string_view text, std::string_view filename = "<input>");

// Whether `text` looks like MLIR rather than HLO text: its first token,
// after whitespace and `//` comments, is `module`, `func.func`, `builtin.module`,
// a `#alias =` / `!alias =` definition or a quoted generic op.
bool LooksLikeMlirText(std::string_view text);

}  // namespace kiln::stablehlo
