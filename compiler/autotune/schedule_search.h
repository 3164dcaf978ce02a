// The tuner's schedule search (private to kiln_autotune): which kernel the
// core runs next and so when each collective can start, as XLA's
// latency-hiding scheduler chooses. On a slice the simulator runs
// collectives on the ICI links beside the compute that does not wait for
// them, in the executable's kernel order (runtime/timing/step_schedule.h):
// a collective starts once its operands exist, so the order decides how
// much of its transfer hides behind compute.
//
// From the kernels' measured times, orders are built by list scheduling on
// the two engines (the core and the links, collectives kept in program
// order): the ready compute kernel on the longest path to the end first
// (which starts the kernels feeding a long collective early and leaves the
// readers of its result for later), or the one feeding the next collective
// first, under a limit on the bytes live at once (as XLA's scheduler keeps
// under its memory limit): past it, the kernel freeing the most runs. Each order is lowered (driver::PlanEdits::kernel_order), timed as
// any executable is, and kept only when it runs faster and its dataflow
// equals the base's (same_dataflow.h): a reorder never changes a value.
//
// Borrows its arguments for the call; not thread-safe. Errors are values:
// an order that cannot be lowered or timed is counted and skipped.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/autotune/runner.h"
#include "compiler/autotune/tuning_state.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"

namespace kiln::autotune::internal {

// One kernel as the schedule sees it: its measured time, engine, the
// kernels it must run after and the buffers it reads and defines (indices
// into ScheduleProblem::bytes).
struct ScheduledKernel {
  double us = 0;
  bool on_links = false;
  std::vector<int64_t> before;
  std::vector<int64_t> reads;
  std::vector<int64_t> defines;
};

// A computation's kernels in their current order (a valid one) and their
// buffers: a buffer is live from its kernel to its last reader, or to the
// end when returned (fusion::KernelGraph's model).
struct ScheduleProblem {
  std::vector<ScheduledKernel> kernels;
  std::vector<double> bytes;
  std::vector<char> returned;
  // Bytes of buffers an order may keep live at once: more HBM than the
  // chip has for them fails buffer assignment.
  double memory_limit = 0;
};

struct ScheduleOrder {
  std::string name;            // "critical path", "collective feeders first", with its memory limit
  std::vector<int64_t> order;  // kernel indices, a valid order
  double simulated_us = 0;     // the order list-scheduled on the two engines
  double peak_bytes = 0;       // most bytes live at once
};

// The orders to try, fastest list-scheduled first: each distinct from the
// current order and from the others. An order runs the ready kernel of
// the best rank unless that would take the live bytes past its limit (the
// current order's peak, or the problem's memory limit), then the one that
// frees the most bytes. Empty when no kernel runs on the links.
std::vector<ScheduleOrder> LatencyHidingOrders(const ScheduleProblem& problem);

// `order` list-scheduled as the simulator runs it: the links take the
// collectives in order once their operands exist, the core runs the first
// ready kernel of the order. Microseconds until the last kernel ends.
double ListScheduledUs(const ScheduleProblem& problem, const std::vector<int64_t>& order);

// The most bytes live at once when the kernels run in `order`.
double PeakLiveBytes(const ScheduleProblem& problem, const std::vector<int64_t>& order);

// Whether `kernel` of `entry` moves its data over the links: it computes a
// collective that starts a transfer (not the -done half of a pair).
bool RunsOnLinks(const hlo::Computation& entry, const fusion::Kernel& kernel);

struct ScheduleSearchResult {
  bool improved = false;
  std::vector<std::vector<int64_t>> kernel_order;  // of the best order (driver::PlanEdits::kernel_order)
  std::string order_name;
  std::vector<uint8_t> executable;  // the best order's
  Measurement measurement;          // its timing
  double exposed_us = 0;            // in the base: device time the core waits on the links
  int64_t orders_measured = 0;
  int64_t rejected = 0;  // faster but not the base's dataflow
  bool memory_checked = false;  // the best order's memory overlaps checked too (same_dataflow.h)
  std::string note;      // why nothing was tried, or what was
};

// Reorders the plan `point` forms (with `bodies` in its loops): `base` is
// its executable and `base_measurement` its timing. Trials count in
// result.trials; the search stops at `deadline`.
Result<ScheduleSearchResult> SearchSchedule(TuningState& state, const Point& point, const fusion::BodyFlips& bodies,
                                            const std::vector<uint8_t>& base, const Measurement& base_measurement,
                                            Runner& runner, std::chrono::steady_clock::time_point deadline,
                                            TuneResult& result);

// Records in `result` what `schedule` (SearchSchedule's answer for the plan
// at `point`) found: its note, and when an order is faster, its edits (the
// plan at `point` as well when no plan was accepted before), executable,
// time and decision; its measurement moves into `tuned`. Returns the
// microseconds the order saved (0 when none was faster).
double RecordSchedule(TuningState& state, const Point& point, ScheduleSearchResult& schedule, Measurement& tuned,
                      TuneResult& result);

}  // namespace kiln::autotune::internal
