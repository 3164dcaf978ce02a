// The StableHLO interpreter's `check` test dialect, as the side-effecting
// custom calls the StableHLO front end makes of it (compiler/stablehlo):
// custom-call(actual, expected), custom_call_target one of
//   check.expect_eq         exact (floats by IEEE ==, integers bitwise),
//   check.expect_almost_eq  |a - b| <= tolerance, same sign, NaN only with NaN
//                           (backend_config "tolerance=T"),
//   check.expect_close      min <= ULP distance <= max
//                           (backend_config "min_ulp=A max_ulp=B"),
//   check.eq                almost_eq for floats, exact for integers; its
//                           result is the outcome as pred[],
// evaluated as stablehlo-translate --interpret evaluates them. A check
// never fails the evaluation: its outcome goes to the CheckRecorder of the
// evaluation (EvalOptions::checks), which counts it; without one it is
// only computed.
//
// CheckRecorder is thread-safe (the chips of a slice record concurrently).
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "runtime/eval/value.h"

namespace kiln::runtime {

struct CheckOutcome {
  std::string check;   // "check.expect_close"
  std::string name;    // the instruction, e.g. "check.expect_close.L11.42"
  int line = 0;        // the source line of the check, when known (0 otherwise)
  bool passed = false;
  std::string message;  // why it failed: the first mismatching element
};

class CheckRecorder {
 public:
  void Record(CheckOutcome outcome);
  int64_t passed() const;
  int64_t failed() const;
  // Failed checks in the order they ran (at most kMaxKeptFailures).
  std::vector<CheckOutcome> failures() const;

  static constexpr size_t kMaxKeptFailures = 100;

 private:
  mutable std::mutex mu_;
  int64_t passed_ = 0;
  int64_t failed_ = 0;
  std::vector<CheckOutcome> failures_;
};

bool IsCheckTarget(std::string_view target);

// Evaluates one check custom call; fails only on operands it cannot compare
// (tuples, different shapes or element types).
Result<Value> EvalCheckCustomCall(const hlo::Instruction& instr, std::string_view target,
                                  std::span<const Value> operands, CheckRecorder* recorder);

}  // namespace kiln::runtime
