#include "runtime/timing/timing_simulator.h"

#include "runtime/timing/kernel_timer.h"

namespace kiln::runtime::timing {
namespace {

// Kernels with control flow are priced per run; everything else once.
bool HasControlFlow(const hlo::Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() == hlo::Opcode::kWhile || instr->opcode() == hlo::Opcode::kConditional) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<ProgramTimer>> ProgramTimer::Create(const LoadedProgram& program,
                                                           const ChipSpec& chip,
                                                           const TimingOptions& options) {
  std::unique_ptr<ProgramTimer> timer(new ProgramTimer(program, chip, options));
  const Program& p = program.program();
  timer->kernels_.resize(p.kernels.size());
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    KernelEntry& entry = timer->kernels_[k];
    for (uint32_t b : p.kernels[k].inputs) entry.inputs.push_back(&program.buffer_shape(b));
    for (uint32_t b : p.kernels[k].outputs) entry.outputs.push_back(&program.buffer_shape(b));
    if (HasControlFlow(program.kernel_module(k))) continue;
    KILN_ASSIGN_OR_RETURN(KernelProfile profile, timer->Compute(k, nullptr));
    entry.fixed = std::move(profile);
  }
  return timer;
}

Result<KernelProfile> ProgramTimer::Compute(size_t k, const ControlFlowCounts* counts) const {
  const ProgramKernel& kernel = program_.program().kernels[k];
  KernelDescription d;
  d.name = kernel.name;
  d.kind = kernel.kind;
  d.module = &program_.kernel_module(k);
  d.inputs = kernels_[k].inputs;
  d.outputs = kernels_[k].outputs;
  d.tiling = &kernel.tiling;
  return timing::TimeKernel(d, chip_, options_, counts);
}

Result<KernelProfile> ProgramTimer::TimeKernel(size_t k, const ControlFlowCounts* counts) const {
  if (k >= kernels_.size()) {
    return OutOfRangeError("kernel " + std::to_string(k) + " out of range (the program has " +
                           std::to_string(kernels_.size()) + ")");
  }
  if (kernels_[k].fixed) return *kernels_[k].fixed;
  return Compute(k, counts);
}

DeviceProfile AssembleSliceProfile(const ChipSpec& chip, std::vector<KernelProfile> kernels,
                                   const TimingOptions& options) {
  const std::string topology = options.topology ? options.topology->ToString() : SingleChip(chip).ToString();
  return AssembleProfile(chip.name, std::move(kernels), topology, static_cast<int>(options.chips()));
}

Result<DeviceProfile> SimulateProgram(const LoadedProgram& program, const ChipSpec& chip,
                                      const TimingOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ProgramTimer> timer, ProgramTimer::Create(program, chip, options));
  std::vector<KernelProfile> kernels;
  kernels.reserve(timer->kernel_count());
  for (size_t k = 0; k < timer->kernel_count(); ++k) {
    KILN_ASSIGN_OR_RETURN(KernelProfile profile, timer->TimeKernel(k));
    kernels.push_back(std::move(profile));
  }
  return AssembleSliceProfile(chip, std::move(kernels), options);
}

}  // namespace kiln::runtime::timing
