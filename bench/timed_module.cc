#include "bench/timed_module.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "compiler/driver/compile_module.h"
#include "compiler/fusion/sharding.h"
#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/timed_slice_execution.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::bench {

Result<TimedModule> TimeModuleText(std::string_view text, std::string_view name, std::string_view chip,
                                   fusion::PlanKind plan) {
  const runtime::ChipSpec* spec = runtime::FindChip(chip);
  if (spec == nullptr) return InvalidArgumentError("unknown chip " + std::string(chip));
  KILN_ASSIGN_OR_RETURN(auto module, hlo::ParseModule(text, std::string(name)));
  TimedModule out;
  out.devices = fusion::ShardedDeviceCount(*module->entry());
  for (const auto& computation : module->computations()) {
    for (const auto& instr : computation->instructions()) {
      out.has_matmul |= instr->opcode() == hlo::Opcode::kDot || instr->opcode() == hlo::Opcode::kConvolution;
    }
  }
  driver::CompileOptions options;
  options.chip = std::string(chip);
  options.plan = plan;
  if (out.devices > 1) {  // per chip, on the most compact slice of its devices
    KILN_ASSIGN_OR_RETURN(runtime::Topology slice, runtime::CompactSlice(out.devices, *spec));
    options.topology = slice.ToString();
    out.topology = options.topology;
  }
  KILN_ASSIGN_OR_RETURN(auto compiled, driver::CompileModule(*module, options));
  KILN_ASSIGN_OR_RETURN(auto loaded, runtime::LoadedProgram::FromBytes(compiled.executable));
  KILN_ASSIGN_OR_RETURN(auto timing, runtime::timing::ProgramSliceTiming(loaded->program(), *spec, {}));
  KILN_ASSIGN_OR_RETURN(out.profile, runtime::timing::SimulateProgram(*loaded, *spec, timing));
  return out;
}

const runtime::timing::KernelProfile* WorstNonContraction(const runtime::timing::DeviceProfile& profile) {
  const runtime::timing::KernelProfile* worst = nullptr;
  double ratio = -1;
  for (const runtime::timing::KernelProfile& k : profile.kernels) {
    if (k.mxu_utilization > 0 || k.ideal_bytes <= 0) continue;
    if (k.bytes / k.ideal_bytes > ratio) {
      ratio = k.bytes / k.ideal_bytes;
      worst = &k;
    }
  }
  return worst;
}

std::string TopKernels(const runtime::timing::DeviceProfile& profile, int top) {
  std::vector<const runtime::timing::KernelProfile*> by_time;
  for (const runtime::timing::KernelProfile& k : profile.kernels) by_time.push_back(&k);
  std::sort(by_time.begin(), by_time.end(),
            [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
  std::string out;
  for (int i = 0; i < top && i < static_cast<int>(by_time.size()); ++i) {
    char item[160];
    std::snprintf(item, sizeof(item), "%s%s %.1f%%", i ? ", " : "", by_time[i]->name.c_str(),
                  profile.seconds > 0 ? 100 * by_time[i]->seconds / profile.seconds : 0.0);
    out += item;
  }
  return out;
}

}  // namespace kiln::bench
