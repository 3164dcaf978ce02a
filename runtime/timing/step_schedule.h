// List scheduling on the chip's two engines: the TensorCore, which runs
// compute one piece after another, and the ICI links, which move
// collectives. As XLA's async collectives and latency-hiding scheduler do,
// a collective starts once its operands are ready and the links are free
// (collectives in program order), and the core runs, of the pieces whose
// operands are ready, the first in program order: a piece that reads a
// collective's result waits while the compute after it that does not read
// it goes first, so a layer's weight all-gather or gradient all-reduce
// moves while the core computes whatever does not read it.
//
// Two users: one run of a loop body or branch (its LoopSteps; a run is a
// barrier, nothing of the next iteration starts early), and a program's
// kernels (timing_simulator.h).
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "compiler/hlo/instruction.h"

namespace kiln::runtime::timing {

struct TimedStep {
  const hlo::Instruction* instruction = nullptr;
  double seconds = 0;   // one run of the step alone
  bool on_links = false;  // a collective timed over ICI
};

// One piece of work to schedule: how long it runs, on which engine, and
// the pieces before it in program order that it must wait for (borrowed:
// the caller keeps the list alive while it schedules, so a program's fixed
// lists are not copied on every run).
struct ScheduleItem {
  double seconds = 0;
  bool on_links = false;
  std::span<const size_t> after;
};

struct Schedule {
  std::vector<double> starts;  // per item
  double seconds = 0;          // when the last item ends
};

// `items` in program order, scheduled as above.
Schedule ListSchedule(std::span<const ScheduleItem> items);

// Seconds one run of `steps` takes, all steps of one computation in program
// order. Without collectives it is their sum. A step's operands are the
// steps that produce them, seen through instructions that are not steps
// (get-tuple-element, bitcast, broadcast, ...); parameters are ready at
// the start.
double OverlappedSeconds(std::span<const TimedStep> steps);

}  // namespace kiln::runtime::timing
