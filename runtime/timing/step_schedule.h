// The schedule of one run of a loop body or branch (its LoopSteps, in
// program order) on the chip's two engines: the TensorCore, which runs
// compute steps one after another, and the ICI links, which move
// collectives. As XLA's async collectives and latency-hiding scheduler do,
// a collective starts once its operands are ready and the links are free
// (collectives in program order), and the core runs, of the steps whose
// operands are ready, the first in program order: a step that reads a
// collective's result waits while the compute after it that does not read
// it goes first, so a layer's weight all-gather or gradient all-reduce
// moves while the core computes whatever does not read it. A run is a
// barrier: nothing of the next iteration starts early.
//
// Pure function of its arguments; thread-safe.
#pragma once

#include <span>

#include "compiler/hlo/instruction.h"

namespace kiln::runtime::timing {

struct TimedStep {
  const hlo::Instruction* instruction = nullptr;
  double seconds = 0;   // one run of the step alone
  bool on_links = false;  // a collective timed over ICI
};

// Seconds one run of `steps` takes, all steps of one computation in program
// order. Without collectives it is their sum. A step's operands are the
// steps that produce them, seen through instructions that are not steps
// (get-tuple-element, bitcast, broadcast, ...); parameters are ready at
// the start.
double OverlappedSeconds(std::span<const TimedStep> steps);

}  // namespace kiln::runtime::timing
