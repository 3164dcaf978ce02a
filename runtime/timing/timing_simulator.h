// The timing simulator: a credible TPU time for every kernel of an
// executable on a simulated chip, and the device time of a whole run.
//
// Two ways to use it:
//  - SimulateProgram: timing only, no values. Loop trip counts and branch
//    choices must be static (trip_count.h); otherwise the error says which
//    loop depends on data ("timing-only: while loop %w trip count depends on
//    data"). An 8192^3 dot is timed in well under a millisecond of host time.
//  - ProgramTimer: combined with execution. The executor calls
//    TimeKernel(k, counts) after running kernel k, passing the control flow
//    it observed (ControlFlowCounts), and assembles the profile with
//    AssembleProfile (device_profile.h).
// The compiler's analytic cost model (used to plan) is separate; this is
// the detailed measurement (kernel_timer.h, grid_model.h).
//
// A ProgramTimer borrows its LoadedProgram (which must outlive it) and is
// immutable after Create: TimeKernel may be called from many threads.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/device_profile.h"
#include "runtime/timing/kernel_work.h"
#include "runtime/timing/timing_options.h"

namespace kiln::runtime::timing {

class ProgramTimer {
 public:
  // Prices every kernel that has no control flow once, up front. Fails only
  // on bad options (forced dot tiles over the scoped VMEM).
  static Result<std::unique_ptr<ProgramTimer>> Create(const LoadedProgram& program, const ChipSpec& chip,
                                                      const TimingOptions& options = {});

  size_t kernel_count() const { return kernels_.size(); }
  const ChipSpec& chip() const { return chip_; }
  const TimingOptions& options() const { return options_; }

  // The profile of one run of kernel `k`. `counts` is the control flow the
  // executor observed in that run; nullptr means "derive it statically".
  Result<KernelProfile> TimeKernel(size_t k, const ControlFlowCounts* counts = nullptr) const;

  // The device profile of one run whose kernel k took kernels[k] (one per
  // kernel, in order). On a slice, collective kernels run on the links
  // beside the compute kernels that do not wait for them (step_schedule.h:
  // as XLA's async collectives and latency-hiding scheduler run them);
  // otherwise kernels run end to end.
  DeviceProfile Assemble(std::vector<KernelProfile> kernels) const;

 private:
  struct KernelEntry {
    std::vector<const hlo::Shape*> inputs;
    std::vector<const hlo::Shape*> outputs;
    std::optional<KernelProfile> fixed;  // kernels whose time never varies
  };
  ProgramTimer(const LoadedProgram& program, const ChipSpec& chip, const TimingOptions& options)
      : program_(program), chip_(chip), options_(options) {}
  Result<KernelProfile> Compute(size_t k, const ControlFlowCounts* counts) const;

  const LoadedProgram& program_;
  ChipSpec chip_;
  TimingOptions options_;
  std::vector<KernelEntry> kernels_;
  // On a slice, per kernel, the earlier kernels it waits for through the
  // buffers it reads and writes (fixed per program; empty on one chip).
  std::vector<std::vector<size_t>> predecessors_;
};

// ProgramTimer::Assemble for kernels timed elsewhere, one by one (the
// autotuner's runner times each kernel alone, so one that fails strict
// tiling fails by itself): kernels[k] is kernel k of `program`, timed
// under `options`.
DeviceProfile AssembleRun(const Program& program, const ChipSpec& chip, const TimingOptions& options,
                          std::vector<KernelProfile> kernels);

// Times every kernel once, in execution order, without values.
Result<DeviceProfile> SimulateProgram(const LoadedProgram& program, const ChipSpec& chip,
                                      const TimingOptions& options = {});

}  // namespace kiln::runtime::timing
