#include "runtime/timing/timed_execution.h"
#include "runtime/timing/timed_slice_execution.h"

#include <algorithm>
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

namespace {

// One recorder per kernel of `program`, and the observers ExecuteProgram takes.
struct Recorders {
  explicit Recorders(const LoadedProgram& program) {
    const size_t kernels = program.program().kernels.size();
    recorders.reserve(kernels);
    for (size_t k = 0; k < kernels; ++k) recorders.emplace_back(program.kernel_module(k));
    for (ControlFlowRecorder& recorder : recorders) observers.push_back(&recorder);
  }
  std::vector<ControlFlowRecorder> recorders;
  std::vector<ControlFlowObserver*> observers;
};

Status CheckTimer(const LoadedProgram& program, const ProgramTimer& timer) {
  const size_t kernels = program.program().kernels.size();
  if (timer.kernel_count() == kernels) return Ok();
  return InternalError("the timer has " + std::to_string(timer.kernel_count()) + " kernels, the program " +
                       std::to_string(kernels));
}

// The device time of a run whose kernels took the recorded control flow.
Result<DeviceProfile> TimeRun(const ProgramTimer& timer, const Recorders& recorded) {
  std::vector<KernelProfile> profiles;
  profiles.reserve(recorded.recorders.size());
  for (size_t k = 0; k < recorded.recorders.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(KernelProfile profile, timer.TimeKernel(k, &recorded.recorders[k].counts()));
    profiles.push_back(std::move(profile));
  }
  return timer.Assemble(std::move(profiles));
}

}  // namespace

Result<TimedExecution> ExecuteTimed(const LoadedProgram& program, const ProgramTimer& timer,
                                    std::span<const hlo::Literal> args,
                                    const EvalOptions& options) {
  KILN_RETURN_IF_ERROR(CheckTimer(program, timer));
  Recorders recorded(program);
  TimedExecution run;
  KILN_ASSIGN_OR_RETURN(run.result, ExecuteProgram(program, args, options, recorded.observers));
  run.profile = TimeRun(timer, recorded);
  return run;
}

Result<TimingOptions> ProgramSliceTiming(const Program& program, const ChipSpec& chip, TimingOptions base) {
  if (program.topology.empty()) return base;
  KILN_ASSIGN_OR_RETURN(Topology topology, ParseTopology(program.topology, chip));
  base.topology = std::move(topology);
  const SliceShape slice = ProgramSliceShape(program, base.chips());
  base.assignment = {slice.replicas, slice.partitions};
  return base;
}

SliceShape ProgramSliceShape(const Program& program, int64_t chips) {
  const int64_t replicas = std::max<int64_t>(program.replica_count, 1);
  return {replicas, chips / replicas};
}

Result<TimedSliceExecution> ExecuteTimedOnSlice(const LoadedProgram& program, const ProgramTimer& timer,
                                                SliceShape slice, std::span<const std::vector<hlo::Literal>> args,
                                                const EvalOptions& options) {
  KILN_RETURN_IF_ERROR(CheckTimer(program, timer));
  Recorders recorded(program);
  TimedSliceExecution run;
  KILN_ASSIGN_OR_RETURN(run.results, ExecuteProgramOnSlice(program, slice, args, options, recorded.observers));
  run.profile = TimeRun(timer, recorded);
  return run;
}

}  // namespace kiln::runtime::timing
