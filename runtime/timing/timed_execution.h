// Execution with timing: runs a LoadedProgram on the evaluator and prices
// every kernel with the control flow it actually took (while-loop trips and
// branches, observed through EvalOptions::control_flow), so a program whose
// loops depend on data still gets a device time.
//
// A ControlFlowRecorder serves one kernel run and is not thread-safe.
// ExecuteTimed borrows its arguments for the call; concurrent calls sharing
// one LoadedProgram and ProgramTimer are safe.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "runtime/eval/evaluator.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/device_profile.h"
#include "runtime/timing/kernel_work.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {

// Collects the ControlFlowCounts of one run of a kernel module.
class ControlFlowRecorder final : public ControlFlowObserver {
 public:
  // Every while loop and conditional of `module` starts at zero runs, so one
  // that never ran (in a branch not taken) is priced as no work.
  explicit ControlFlowRecorder(const hlo::Module& module);

  void WhileFinished(const hlo::Instruction& while_op, int64_t trips) override;
  void BranchTaken(const hlo::Instruction& conditional, size_t branch) override;

  const ControlFlowCounts& counts() const { return counts_; }

 private:
  ControlFlowCounts counts_;
};

struct TimedExecution {
  hlo::Literal result;
  // The device time of this run. An error here (naming the kernel) leaves
  // `result` valid: the values were computed, only the timing failed.
  Result<DeviceProfile> profile;
};

// ExecuteProgram with a recorder per kernel, then timer.TimeKernel(k, its
// counts) for every kernel, assembled in execution order. The returned error
// is an execution error. `timer` must have been created for `program`.
Result<TimedExecution> ExecuteTimed(const LoadedProgram& program, const ProgramTimer& timer,
                                    std::span<const hlo::Literal> args,
                                    const EvalOptions& options = {});

}  // namespace kiln::runtime::timing
