// The tuner's search inside loop bodies and branches (private to
// kiln_autotune): the fusion decisions of every computation control flow
// runs (fusion/body_fusion.h), where a training step spends its time (a
// scanned layer is a while body).
//
// Each body kernel is one step of its loop, timed by its trips; a run
// reports every step's time (Runner: KernelTime::steps), so a kernel's time
// depends only on its instructions and is reused in every plan that forms
// it again. A round proposes, per computation, flips of one decision or of
// all of one producer's at once, on the kernels that take the most time
// (time x trips), predicts each from the steps measured (kernels not yet
// measured from the cost model, scaled by what that computation measured
// against it) and measures the best few of every computation in one
// program, on kernels apart; a move is kept when its kernels, now
// measured, take less time than those it replaces. The plan returned is
// known exactly: every kernel of it measured.
//
// Borrows its arguments for the call; not thread-safe. Errors are values:
// a candidate that cannot be formed, lowered or timed is counted and
// skipped.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/autotune/runner.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/fusion/body_fusion.h"

namespace kiln::autotune::internal {

struct BodySearchBudget {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int64_t max_trials = 0;  // 0: no limit
  const TuneOptions* tune = nullptr;  // for cancellation; may be null
};

struct BodySearchResult {
  fusion::BodyFlips flips;       // the best plan found (empty: the heuristic's)
  double predicted_gain_us = 0;  // its kernels' time saved, as measured step by step
  int64_t computations = 0;      // computations with decisions to flip
  int64_t moves_measured = 0;
  int64_t moves_kept = 0;
  std::vector<std::string> described;  // "%a -> %b fused (in %body)", per flip of `flips`
};

// `prepared` must come from PrepareModuleForTuning with bodies fused;
// `baseline` is the heuristic executable's measurement. Trials are counted
// in result.trials (and their failures in result.invalid_candidates).
Result<BodySearchResult> SearchBodies(const driver::PreparedModule& prepared, const driver::CompileOptions& options,
                                      Runner& runner, const Measurement& baseline, const BodySearchBudget& budget,
                                      TuneResult& result);

// The share of `m`'s kernel time spent in loop and branch steps.
double BodyShare(const Measurement& m);

}  // namespace kiln::autotune::internal
