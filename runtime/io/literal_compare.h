// Comparison of a computed literal with an expected one, as XLA's
// LiteralTestUtil does: exact for integers, pred and kEqual; within a
// tolerance for floating-point (and complex) elements under kNear.
//
// An element passes under kNear when |actual - expected| <= abs or
// |actual - expected| / |expected| <= rel (XLA's ErrorSpec: a mismatch must
// exceed both). NaN matches NaN; an infinity matches only the same infinity.
// Complex elements compare real and imaginary parts separately. Shapes must
// agree in element type and dimensions (layouts are ignored; literals are
// row-major).
//
// Default tolerances by element type (DefaultTolerance), used when no
// error_spec is given:
//   f64, c128        abs 1e-12  rel 1e-10
//   f32, c64         abs 1e-5   rel 1e-4
//   f16              abs 1e-3   rel 1e-3
//   bf16             abs 1e-2   rel 1e-2
//   f8 / f4 types    abs 1e-1   rel 1.25e-1
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/primitive_type.h"

namespace kiln::runtime::io {

enum class CompareMode { kEqual, kNear };

struct Tolerance {
  double abs = 0;
  double rel = 0;
};

Tolerance DefaultTolerance(hlo::PrimitiveType type);

struct CompareOptions {
  CompareMode mode = CompareMode::kNear;
  // Overrides DefaultTolerance for every floating-point element type.
  std::optional<Tolerance> tolerance;
};

// Ok when `actual` matches `expected`. Otherwise the error names the tuple
// index (if any) and the multi-dimensional index of the first mismatching
// element, both values and the tolerance, and how many elements differ:
// "at {1} index [0,2]: expected 1.5, got 1.625 (abs error 0.125 > 1e-05, rel
// error 0.0833 > 0.0001); 3 of 6 elements differ".
Status CompareLiterals(const hlo::Literal& expected, const hlo::Literal& actual,
                       const CompareOptions& options = {});

}  // namespace kiln::runtime::io
