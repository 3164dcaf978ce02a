// Runner: how the autotuner measures a candidate executable and checks its
// outputs, without knowing what runs it (server/service/tune_runner.h implements it
// over the timing simulator and the evaluator, for `kiln tune` and the
// server's tuning jobs, which yield to the pool's runs).
//
// A runner is used by one tuning loop at a time (not thread-safe unless an
// implementation says so). Errors are values: a failed measurement rejects
// the candidate, it never stops the tuning.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::autotune {

// One step of a kernel's loop bodies and branches (an instruction or a
// body fusion, by name) over one run of the kernel: all its trips.
struct StepTime {
  std::string name;
  double us = 0;
};

struct KernelTime {
  std::string name;  // the executable kernel's name (its first root)
  std::string kind;    // loop, output, ...
  std::string tiling;  // the blocks timed, for reports
  double us = 0;
  // Set when this kernel could not be timed, e.g. under strict tiling its
  // carried tile does not fit its iteration space; `us` is then 0.
  std::optional<std::string> error;
  // With loops or branches: their steps (runtime/timing/kernel_timer.cc
  // times each as a kernel of its own, by its trips); `us` is their sum
  // plus the rest of the kernel, less what collectives overlap.
  std::vector<StepTime> steps;
};

struct Measurement {
  // Device time of one run as an execute reports it (on a slice,
  // collectives overlap the compute that does not wait for them): what a
  // tuned program must beat, and what its entry answers. Meaningless if any
  // kernel failed.
  double device_us = 0;
  // The kernels' times summed: additive, so kernels measured in different
  // programs compose into predictions. Equal to device_us on one chip.
  double kernel_us = 0;
  std::vector<KernelTime> kernels;  // execution order
  bool ok() const {
    for (const KernelTime& k : kernels) {
      if (k.error) return false;
    }
    return true;
  }
};

// What a kernel-by-kernel check covered.
struct KernelCheck {
  int64_t changed_kernels = 0;  // candidate kernels the reference lacks
  int64_t regions = 0;          // groups of them checked together
  int64_t compared_values = 0;
  // Groups that could not be checked here (too large to evaluate, not
  // evaluable): the entry instructions they compute, and why. The tuner
  // keeps the heuristic's form for them.
  std::vector<std::string> refused_instructions;
  std::string refused_why;
};

// One changed kernel checked alone (body_check.h): two self-contained HLO
// modules with the same parameters.
struct ModulePair {
  std::string name;          // what it checks, for messages
  std::string computation;   // the computation whose kernel it is
  std::string reference_hlo;  // the instructions evaluated directly
  std::string candidate_hlo;  // the kernel the candidate runs
  std::vector<std::string> instructions;  // those it covers
};

class Runner {
 public:
  virtual ~Runner() = default;

  // Device microseconds of `executable` (serialized kiln executable), per
  // kernel. `strict_tiling`: each kernel is timed with exactly the tile it
  // carries, or gets an error (candidates); false times it as any
  // executable is timed (the heuristic baseline). An error result means
  // the executable could not be timed at all.
  virtual Result<Measurement> Measure(std::span<const uint8_t> executable, bool strict_tiling) = 0;

  // Runs `executable` on random inputs made from `seed` and keeps its
  // outputs as the reference. An error says why outputs cannot be
  // compared for this module (too large to evaluate, an op the evaluator
  // lacks): then only candidates that compute exactly what the reference
  // does may be accepted.
  virtual Status SetReference(std::span<const uint8_t> executable, uint64_t seed) = 0;

  // Ok when `executable` gives the reference's outputs on the same inputs
  // within the corpus tests' tolerance; kFailedPrecondition naming the
  // first difference when not; other errors when it could not run.
  virtual Status CompareToReference(std::span<const uint8_t> executable) = 0;

  // Whether CompareChangedKernels is implemented: then a program whose
  // outputs cannot be compared whole still has its fusion searched.
  virtual bool ChecksKernels() const { return false; }

  // Checks only the kernels of `candidate` that differ from `reference`'s
  // (both from one prepared module), each region of them on random values
  // of what it reads, against the reference's kernels for the same
  // instructions. Ok with what was checked and what could not be;
  // kFailedPrecondition naming the first difference.
  virtual Result<KernelCheck> CompareChangedKernels(std::span<const uint8_t> reference,
                                                    std::span<const uint8_t> candidate) {
    (void)reference;
    (void)candidate;
    return UnimplementedError("this runner checks whole programs only");
  }

  // Evaluates both modules of each pair on the same random values of their
  // parameters and compares their results; a pair too large or too slow to
  // evaluate here is refused (its instructions and why, as above).
  // kFailedPrecondition naming the first pair whose values differ.
  virtual Result<KernelCheck> CompareModulePairs(const std::vector<ModulePair>& pairs) {
    (void)pairs;
    return UnimplementedError("this runner checks whole programs only");
  }
};

}  // namespace kiln::autotune
