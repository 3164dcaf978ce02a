#include "runtime/timing/timing_simulator.h"

#include <unordered_map>

#include "runtime/timing/kernel_timer.h"
#include "runtime/timing/step_schedule.h"

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

// For each kernel, the earlier kernels it must wait for: the last writer
// of each buffer it reads (its data) and, for each buffer it writes, the
// last writer and the readers since (so it never overwrites what another
// still reads).
std::vector<std::vector<size_t>> KernelPredecessors(const Program& program) {
  std::unordered_map<uint32_t, size_t> last_writer;
  std::unordered_map<uint32_t, std::vector<size_t>> readers_since;
  std::vector<std::vector<size_t>> after(program.kernels.size());
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const ProgramKernel& kernel = program.kernels[k];
    for (uint32_t b : kernel.inputs) {
      if (auto w = last_writer.find(b); w != last_writer.end()) after[k].push_back(w->second);
    }
    for (uint32_t b : kernel.outputs) {
      if (auto w = last_writer.find(b); w != last_writer.end()) after[k].push_back(w->second);
      for (size_t r : readers_since[b]) {
        if (r != k) after[k].push_back(r);
      }
    }
    for (uint32_t b : kernel.inputs) readers_since[b].push_back(k);
    for (uint32_t b : kernel.outputs) {
      last_writer[b] = k;
      readers_since[b].clear();
    }
  }
  return after;
}

}  // namespace

Result<std::unique_ptr<ProgramTimer>> ProgramTimer::Create(const LoadedProgram& program,
                                                           const ChipSpec& chip,
                                                           const TimingOptions& options) {
  std::unique_ptr<ProgramTimer> timer(new ProgramTimer(program, chip, options));
  const Program& p = program.program();
  timer->kernels_.resize(p.kernels.size());
  // Only a slice's programs have collectives to overlap (Assemble).
  if (options.chips() > 1) timer->predecessors_ = KernelPredecessors(p);
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

namespace {

// Kernels run end to end, except that on a slice collective kernels run on
// the links beside the compute kernels that do not wait for them.
DeviceProfile AssembleKernels(const ChipSpec& chip, const TimingOptions& options,
                              const std::vector<std::vector<size_t>>& predecessors,
                              std::vector<KernelProfile> kernels) {
  const std::string topology = options.topology ? options.topology->ToString() : SingleChip(chip).ToString();
  std::vector<double> starts;
  bool collectives = false;
  for (const KernelProfile& k : kernels) collectives |= k.on_links;
  if (collectives && kernels.size() == predecessors.size()) {
    std::vector<ScheduleItem> items(kernels.size());
    for (size_t k = 0; k < kernels.size(); ++k) items[k] = {kernels[k].seconds, kernels[k].on_links, predecessors[k]};
    starts = ListSchedule(items).starts;
  }
  return AssembleProfile(chip.name, std::move(kernels), topology, static_cast<int>(options.chips()), starts);
}

}  // namespace

DeviceProfile ProgramTimer::Assemble(std::vector<KernelProfile> kernels) const {
  return AssembleKernels(chip_, options_, predecessors_, std::move(kernels));
}

DeviceProfile AssembleRun(const Program& program, const ChipSpec& chip, const TimingOptions& options,
                          std::vector<KernelProfile> kernels) {
  std::vector<std::vector<size_t>> predecessors;
  if (options.chips() > 1) predecessors = KernelPredecessors(program);
  return AssembleKernels(chip, options, predecessors, std::move(kernels));
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
  return timer->Assemble(std::move(kernels));
}

}  // namespace kiln::runtime::timing
