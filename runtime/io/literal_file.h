// Literal files: `name = <HLO literal>` lines, the form of the corpus
// expectation sidecars (<module>.expected.txt) and of `kiln run
// --input-literals`:
//
//   # comment
//   param.0 = s32[2] {0, 2}
//   result = s32[] 2
//   compare = near
//   error_spec = abs=0.0001 rel=1e-05
//
// Each value sits on one line. Blank lines and lines starting with `#` are
// skipped. Errors name file:line and say what was wrong. Parsing is pure and
// thread-safe; the returned struct owns its literals.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "runtime/io/literal_compare.h"

namespace kiln::runtime::io {

struct LiteralFile {
  // param.N by N.
  std::map<int64_t, hlo::Literal> params;
  std::optional<hlo::Literal> result;
  // `compare = equal|near`; kNear when absent.
  CompareMode compare = CompareMode::kNear;
  // `error_spec = abs=A rel=R`; absent means the per-type default.
  std::optional<Tolerance> error_spec;

  // The params as an argument list 0..n-1; an error names the first missing
  // number (params must be numbered without gaps).
  Result<std::vector<hlo::Literal>> Arguments() const;
};

// Parses the text of a literal file; `filename` prefixes error messages.
Result<LiteralFile> ParseLiteralFile(std::string_view text, std::string_view filename = "<input>");

// Reads and parses a file.
Result<LiteralFile> ReadLiteralFile(const std::string& path);

}  // namespace kiln::runtime::io
