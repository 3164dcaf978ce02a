// The tuning loop (after TVM MetaSchedule): search space (search_space.h),
// a seeded strategy guided by a calibrated cost model (calibrated_model.h),
// builder (driver::LowerTuned), runner (runner.h) and records
// (record_store.h), for one module on one chip.
//
// Tune prepares the module once and compiles its heuristic plan (the
// baseline, timed as any executable is). Loop bodies and branches are
// searched first (body_search.h: their fusion decisions, on the share of
// the budget the heuristic spends in loop steps); then, on the bodies
// found, the entry's candidates are measured with strict tiling until the
// budget is spent:
//  - tile sweeps: every kernel of the current plan tries its next tile
//    the model ranks best among those not yet measured (and promising
//    against the kernel's best so far); kernels are timed apart, so one
//    trial measures a tile of every kernel and the best tile per kernel
//    composes exactly;
//  - fusion moves (simulated annealing): flips of one or two profitability
//    decisions, or all of one producer's at once (the only move that removes
//    a kernel several consumers refused to absorb), weighted towards the
//    slowest kernels; the model predicts
//    several proposals (measured kernels exactly, new ones calibrated) and
//    only the best is measured, when the model says it may pay.
// The best plan is measured once more and accepted only when it is faster
// than the heuristic and its outputs equal the heuristic's on random
// inputs; when the whole module cannot be evaluated here, when every
// kernel that differs from the heuristic's computes the heuristic's values
// (Runner::CompareChangedKernels), and with a runner that cannot check
// kernels, when it computes exactly what the heuristic does (then only
// tiles are searched). Else the heuristic stays and the result says why.
//
// Same module, options, seed and max_trials (no max_seconds) give the same
// result. A tuning error is returned only when the heuristic itself cannot
// be compiled or timed, or when TuneOptions::cancelled stopped it
// (kCancelled: the records of the trials measured are kept, no result);
// candidates that fail are counted and skipped.
// Borrows its arguments for the call; not thread-safe per runner.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/autotune/record_store.h"
#include "compiler/autotune/runner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/driver/tuned_plan.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"

namespace kiln::autotune {

struct TuneOptions {
  uint64_t seed = 1;
  int64_t max_trials = 0;    // 0: no limit (max_seconds must be set)
  double max_seconds = 0;    // 0: no limit (max_trials must be set)
  uint64_t input_seed = 7;   // random inputs of the output check
  // Polled before the search and between trials (never during one); true
  // stops the tuning with kCancelled. Called on the tuning thread; must be
  // cheap. Optional.
  std::function<bool()> cancelled;
};

// Upper bounds that catch a mistyped budget.
inline constexpr int64_t kMaxTrials = 1'000'000;
inline constexpr double kMaxSeconds = 7 * 24 * 3600;

// Ok when the budget is set and sane; the error says which bound it broke.
Status CheckBudget(const TuneOptions& options);

// One row of the report: a kernel of the tuned program (or of the
// heuristic's, when tuning fused it away), with both times.
struct KernelComparison {
  std::string name;
  std::string kind;
  std::optional<double> heuristic_us;  // absent: the heuristic has no such kernel
  std::optional<double> tuned_us;      // absent: the tuned plan has none
  std::string heuristic_tiling;
  std::string tuned_tiling;
};

struct StageMs {
  double prepare = 0;  // passes and the heuristic compile
  double compile = 0;  // lowering candidates
  double timing = 0;   // the runner's measurements
  double model = 0;    // forming kernels, tile candidates, predictions
  double verify = 0;   // evaluating outputs
  double records = 0;  // transfer look-ups and storing records
};

struct TuneResult {
  hlo::Fingerprint fingerprint;  // of the heuristic compile, which the tuned program keeps
  std::string key;               // fingerprint.key in hex
  std::string chip;
  double heuristic_us = 0;  // the heuristic executable as any executable is timed
  double tuned_us = 0;      // the accepted program (heuristic_us when none)
  bool accepted = false;
  std::string decision;     // why the tuned program was or was not accepted
  std::vector<uint8_t> heuristic_executable;
  std::vector<uint8_t> tuned_executable;  // empty unless accepted
  driver::PlanEdits edits;                // of the accepted plan
  std::vector<std::string> edge_flips;    // "%a -> %b fused", ...
  int64_t tile_changes = 0;               // kernels not on their largest tile
  // The gain (heuristic_us - tuned_us) split: what the kernels' order saves
  // (schedule_gain_us, below), what the best tiles of the heuristic's own
  // kernels save, the share made by fusion in loop bodies and branches
  // (body_gain_us, as their kernels measured step by step) and the rest,
  // from fusion flips in the entry.
  double tiling_gain_us = 0;
  double fusion_gain_us = 0;  // in the entry
  double body_gain_us = 0;
  // Loop bodies and branches: computations with decisions to flip, moves
  // measured, the accepted plan's flips there ("%a -> %b fused (in %body)")
  // and its body kernels checked alone (body_check.h).
  int64_t body_computations = 0;
  int64_t body_moves_measured = 0;
  std::vector<std::string> body_flips;
  int64_t verified_body_kernels = 0;
  // The schedule (on a slice, searched last: schedule_search.h): the device
  // time the kernels' order saved, by hiding collectives behind compute;
  // the order kept ("critical path", ...; empty: the heuristic's), orders
  // timed, what the core waited on the links before, and what was done.
  double schedule_gain_us = 0;
  std::string schedule_order;
  int64_t schedule_orders_measured = 0;
  double exposed_ici_us = 0;
  std::string schedule_note;
  int64_t trials = 0;              // programs measured
  int64_t invalid_candidates = 0;  // failed to form, lower or time strictly
  int64_t model_skipped = 0;       // proposals the model predicted would not pay
  int64_t transfer_hits = 0;       // kernels started from a stored best tile
  double seconds = 0;               // the whole tuning run
  double heuristic_compile_ms = 0;  // the heuristic compile's own time (what a cache hit saves)
  StageMs ms;
  bool fusion_searched = false;
  std::string fusion_note;  // why fusion was not searched, or how its changes are checked
  // How the accepted candidate's values were checked: "whole program"
  // (outputs on random inputs), "kernel by kernel" (only the kernels that
  // differ from the heuristic's, each region on random inputs of what it
  // reads: for programs too large to evaluate whole or compiled for a
  // slice) or "same computation" (tiles only); empty unless accepted.
  std::string verification;
  int64_t verified_kernels = 0;  // changed kernels checked (kernel by kernel)
  int64_t verified_regions = 0;
  int64_t rejected_by_verification = 0;  // final candidates whose values differed or could not be checked
  // Instructions whose kernels could not be checked kernel by kernel (too
  // large to evaluate here, not evaluable): they keep the heuristic's form
  // and the flips touching them were undone (the decision says why).
  int64_t kept_heuristic_instructions = 0;
  // Rank correlation with the measured kernel times of the analytic model
  // and of the calibrated model as it stood before each measurement.
  std::optional<double> spearman_analytic;
  std::optional<double> spearman_calibrated;
  int64_t ranked_kernels = 0;  // measurements behind those
  std::vector<KernelComparison> kernels;
};

// `module` must have passed the verifier; it is modified in place by the
// passes. options.plan must be heuristic. `records` may be null.
Result<TuneResult> Tune(hlo::Module& module, const driver::CompileOptions& options, Runner& runner,
                        RecordStore* records, const TuneOptions& tune);

}  // namespace kiln::autotune
