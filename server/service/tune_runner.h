// SimulatedRunner: the autotuner's Runner (compiler/autotune/runner.h) on
// this machine: times executables with the timing simulator, without
// values (kernel by kernel, so a kernel that fails strict tiling fails
// alone), and checks outputs with the evaluator on seeded random inputs,
// compared as the corpus tests compare (runtime/io/literal_compare.h,
// default tolerances).
//
// Kernels the evaluator lacks (vendor custom calls) are stubbed the same
// way in the reference and the candidates (stubbed_execution.h), and their
// inputs must match too. Programs whose values exceed `memory_budget` bytes at peak, or whose
// evaluation exceeds `step_budget` units, cannot be compared: SetReference
// says so and the tuner then searches tiles only. Not thread-safe; one per
// tuning.
//
// With an evaluation limit, an evaluation that runs past it is an error
// (kDeadlineExceeded), so a slow reference means its fusion is checked
// kernel by kernel (CompareChangedKernels), as for a program too large to
// evaluate whole or compiled for a slice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "compiler/autotune/runner.h"
#include "compiler/hlo/literal.h"
#include "server/service/kernel_verification.h"
#include "server/service/stubbed_execution.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::service {

class SimulatedRunner final : public autotune::Runner {
 public:
  SimulatedRunner(const runtime::ChipSpec& chip, int64_t memory_budget = int64_t{2} << 30,
                  int64_t step_budget = int64_t{1} << 32)
      : chip_(chip), memory_budget_(memory_budget), step_budget_(step_budget) {}

  // Evaluations (the reference, each candidate's, each kernel-by-kernel
  // check) stop after this many seconds; 0: no limit.
  void set_evaluation_limit(double seconds) { evaluation_limit_s_ = seconds; }
  // Called before each kernel is timed or evaluated (it may block, e.g.
  // until the device pool's runs are done: tune_gate.h); its error ends
  // that measurement or evaluation with the error. Unset: nothing waits.
  void set_before_kernel(std::function<Status()> hook) { before_kernel_ = std::move(hook); }

  Result<autotune::Measurement> Measure(std::span<const uint8_t> executable, bool strict_tiling) override;
  Status SetReference(std::span<const uint8_t> executable, uint64_t seed) override;
  Status CompareToReference(std::span<const uint8_t> executable) override;
  // kernel_verification.h, with this runner's memory and step budgets.
  bool ChecksKernels() const override { return true; }
  Result<autotune::KernelCheck> CompareChangedKernels(std::span<const uint8_t> reference,
                                                      std::span<const uint8_t> candidate) override;
  Result<autotune::KernelCheck> CompareModulePairs(const std::vector<autotune::ModulePair>& pairs) override;

 private:
  Result<StubbedRun> Evaluate(std::span<const uint8_t> executable) const;
  // The budgets of a kernel-by-kernel check; the evaluation limit bounds
  // the whole check, between kernels (before_kernel).
  KernelVerificationOptions CheckOptions() const;
  static autotune::KernelCheck ToKernelCheck(KernelVerification checked);

  const runtime::ChipSpec& chip_;
  int64_t memory_budget_;
  int64_t step_budget_;
  uint64_t seed_ = 0;
  double evaluation_limit_s_ = 0;
  std::function<Status()> before_kernel_;
  std::optional<StubbedRun> reference_;
};

}  // namespace kiln::service
