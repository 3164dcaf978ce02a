#include "runtime/timing/timed_execution.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::runtime::timing {

ControlFlowRecorder::ControlFlowRecorder(const hlo::Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() == hlo::Opcode::kWhile) {
        counts_.while_iterations[instr.get()] = 0;
      } else if (instr->opcode() == hlo::Opcode::kConditional) {
        // A conditional calls exactly its branches.
        counts_.branch_runs[instr.get()].assign(instr->called_computations().size(), 0);
      }
    }
  }
}

void ControlFlowRecorder::WhileFinished(const hlo::Instruction& while_op, int64_t trips) {
  counts_.while_iterations[&while_op] += trips;
}

void ControlFlowRecorder::BranchTaken(const hlo::Instruction& conditional, size_t branch) {
  std::vector<int64_t>& runs = counts_.branch_runs[&conditional];
  if (runs.size() <= branch) runs.resize(branch + 1, 0);
  ++runs[branch];
}

Result<TimedExecution> ExecuteTimed(const LoadedProgram& program, const ProgramTimer& timer,
                                    std::span<const hlo::Literal> args,
                                    const EvalOptions& options) {
  const size_t kernels = program.program().kernels.size();
  if (timer.kernel_count() != kernels) {
    return InternalError("the timer has " + std::to_string(timer.kernel_count()) + " kernels, the program " +
                         std::to_string(kernels));
  }
  std::vector<ControlFlowRecorder> recorders;
  std::vector<ControlFlowObserver*> observers;
  recorders.reserve(kernels);
  for (size_t k = 0; k < kernels; ++k) recorders.emplace_back(program.kernel_module(k));
  for (ControlFlowRecorder& recorder : recorders) observers.push_back(&recorder);

  TimedExecution run;
  KILN_ASSIGN_OR_RETURN(run.result, ExecuteProgram(program, args, options, observers));
  std::vector<KernelProfile> profiles;
  profiles.reserve(kernels);
  for (size_t k = 0; k < kernels; ++k) {
    Result<KernelProfile> profile = timer.TimeKernel(k, &recorders[k].counts());
    if (!profile) {
      run.profile = std::unexpected(std::move(profile.error()));
      return run;
    }
    profiles.push_back(std::move(*profile));
  }
  run.profile = AssembleSliceProfile(timer.chip(), std::move(profiles), timer.options());
  return run;
}

}  // namespace kiln::runtime::timing
