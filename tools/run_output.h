// Printing the result of `kiln run`: one block per output (shape and a
// summary: min/max/mean and the first values), optionally the full HLO
// literal, then the device time and the kernel profile; or all of it as one
// JSON object. Pure functions; thread-safe.
#pragma once

#include <string>

#include "compiler/hlo/literal.h"
#include "tools/run_command.h"

namespace kiln::tools {

// Statistics of an array literal's elements (complex: real parts; pred:
// 0/1). NaNs are counted and left out of min/max/mean.
struct LiteralSummary {
  int64_t count = 0;
  int64_t nan_count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  std::vector<std::string> first;  // up to kSummaryValues elements as HLO text
};
inline constexpr int kSummaryValues = 8;

LiteralSummary SummarizeLiteral(const hlo::Literal& array);

// "checks: N passed, M failed" and a line per failed check; one check as
// "check.expect_close at line 11 (%name): why".
std::string FormatChecks(const CheckSummary& checks);
std::string CheckText(const runtime::CheckOutcome& check);

// "output 0: f32[2,3]\n  min -1 max 2 mean 0.5\n  first: 1, 2, ...\n" per
// output; with print_literals, the literal in HLO text follows each. Then
// "eval X ms", the checks (FormatChecks) when the run had any, and for an executable run a line naming it, the kernel
// profile table ending in "device time on CHIP: X us (...)", or "device
// time unavailable: why".
// `top` > 0: only the `top` slowest kernels' rows (FormatProfile).
std::string FormatRunText(const RunReport& report, bool print_literals, size_t top = 0);

// {"module": ..., "outputs": [{"name", "shape", "count", "min", "max",
// "mean", "nan_count", "first": [...]}], "eval_ms": ...}; with
// print_literals, each output also has "literal". A run that evaluated
// StableHLO checks has "checks": {"passed", "failed", "failures": [{"check",
// "name", "line", "message"}]}. An executable run adds
// "key", "plan", "compile_ms" (when compiled here) and the profile's
// "chip", "chips", "device_us", "flops", "bytes", "ideal_bytes", "hfu" and
// "kernels" [{"name", "kind", "us", "bound", "flops", "bytes",
// "ideal_bytes", "rereads", "mxu_utilization", "grid_steps", "tiling"}]
// (runtime/timing/profile_output.h), or "device_error". Under
// --timing-only there are no "outputs" and no "eval_ms".
std::string FormatRunJson(const RunReport& report, bool print_literals);

}  // namespace kiln::tools
