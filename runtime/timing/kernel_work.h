// What one kernel computes, in the units the timing model charges: MXU
// contractions, vector-unit element operations, and the extra HBM traffic
// and loop iterations of control flow.
//
// The walk covers the kernel module's entry and everything it calls
// (fusions, calls, maps, reductions' combiners, loop bodies, branches).
// Elementwise work is charged per (8,128)-padded 32-bit element; free ops
// (parameters, inlined constants, bitcasts, reshapes, broadcasts, tuples)
// cost nothing. While loops are charged trip-count times: the count comes
// from ControlFlowCounts when the executor observed the run, otherwise from
// StaticTripCount (an error when it depends on data). Conditionals without
// observed counts need a constant predicate. Each instruction inside a loop
// or branch is also kept as a LoopStep, so the timer charges it as a step
// of its own instead of overlapping all of a body's work in one roofline.
//
// Pure function over an immutable module; the result's instruction
// pointers borrow from the module. Thread-safe.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "runtime/timing/mxu_model.h"

namespace kiln::runtime::timing {

// Control flow observed while a kernel ran (the executor fills this in).
struct ControlFlowCounts {
  // Body executions of each while loop over one kernel invocation (all the
  // loop's runs summed).
  std::unordered_map<const hlo::Instruction*, int64_t> while_iterations;
  // Executions of each branch of each conditional over one invocation.
  std::unordered_map<const hlo::Instruction*, std::vector<int64_t>> branch_runs;
};

// One instruction of a loop body or branch: it runs as a sequential step
// of its own, `times` times over the kernel, each time bound by its own
// compute, HBM traffic or ICI transfer (XLA runs a body's ops as kernels
// in sequence; their work does not overlap across ops).
struct LoopStep {
  const hlo::Instruction* instruction = nullptr;
  double vector_ops = 0;                    // per run
  double bytes = 0;                         // per run: operands read, result written (step_traffic.h)
  std::vector<Contraction> contractions;    // its dots and convolutions (multiplicity 1), each tiled
  bool collective = false;                  // timed over ICI on a slice
  double times = 0;                         // runs over one kernel invocation
};

struct KernelWork {
  std::vector<Contraction> contractions;  // every dot and convolution
  double vector_ops = 0;    // padded 32-bit element operations
  double vector_flops = 0;  // unpadded element operations (reported FLOPs)
  double loop_bytes = 0;    // HBM traffic of values made inside loops/branches
  double loop_iterations = 0;  // body executions, each a sequential step
  // Holds ops the block pipeline does not model (control flow, sort,
  // scatter, gather, custom calls, collectives): timed from HBM as a whole.
  bool opaque = false;
  // The entry-level reduce with the largest operand, if any.
  const hlo::Instruction* widest_reduce = nullptr;
  // Per kernel input: the vector ops of the entry contraction's prologue
  // computed from that input's blocks (prologue_sources.h). They are in
  // vector_ops once; the block pipeline charges them once per load of the
  // input's blocks. Empty when no contraction has a prologue.
  std::vector<double> prologue_vector_ops;
  // The instructions inside loops and branches, one step each (their work
  // is also in the totals above). Empty for kernels without control flow.
  std::vector<LoopStep> loop_steps;

  double ContractionFlops() const;
  double Flops() const { return ContractionFlops() + vector_flops; }
  // Flops() at the peak each runs at on `chip`: contractions at their
  // operand types' MXU peak (MxuPeakFlops), the rest at the bf16 peak. The
  // kernel's time at 100% hardware FLOP utilization.
  double PeakSeconds(const ChipSpec& chip) const;
  // The entry-level contraction with the most FLOPs; nullptr when none.
  const Contraction* MainContraction() const;
};

struct WorkOptions {
  const ControlFlowCounts* counts = nullptr;  // observed control flow, or none
  // Loop iterations beyond which a kernel is a runaway ("step budget").
  double iteration_budget = static_cast<double>(int64_t{1} << 34);
};

Result<KernelWork> AnalyzeKernelWork(const hlo::Module& module, const WorkOptions& options);

}  // namespace kiln::runtime::timing
