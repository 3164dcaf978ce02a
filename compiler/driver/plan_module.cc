#include "compiler/driver/plan_module.h"

#include "compiler/driver/stopwatch.h"
#include "compiler/fusion/planner.h"
#include "compiler/fusion/sharding.h"

namespace kiln::driver {

fusion::TilingOptions TilingOptionsFor(const CompileOptions& options, const runtime::ChipSpec& chip) {
  fusion::TilingOptions tiling;
  tiling.scoped_vmem_bytes = options.scoped_vmem_bytes > 0 ? options.scoped_vmem_bytes : chip.scoped_vmem_bytes;
  tiling.mxu_size = chip.mxu_size;
  return tiling;
}

Result<CompiledPlan> CompletePlan(const PreparedModule& prepared, const CompileOptions& options,
                                  fusion::FusionPlan plan) {
  KILN_RETURN_IF_ERROR(CheckPlanFits(prepared, options));
  CompiledPlan out;
  out.chip = runtime::FindChip(options.chip);
  out.changed_passes = prepared.changed_passes;
  out.times.passes_ms = prepared.passes_ms;
  out.plan = std::move(plan);
  Stopwatch watch;

  // A per-device program for a slice (a topology) must fit one chip. A
  // module with global shapes and sharding annotations compiled without a
  // topology runs over that many chips: its buffers must fit their
  // combined HBM.
  const hlo::Computation& entry = *prepared.module->entry();
  int64_t devices = options.topology.empty() ? fusion::ShardedDeviceCount(entry) : 1;
  out.devices = devices;
  std::string target = std::string(out.chip->name);
  if (!options.topology.empty()) target += " (one chip of the " + options.topology + " slice)";
  if (devices > 1) target = std::to_string(devices) + " x " + target + " (sharding annotations)";
  std::vector<buffers::OutputAlias> aliases;
  if (const hlo::Attribute* header = prepared.module->FindAttribute("input_output_alias")) {
    Result<std::vector<buffers::OutputAlias>> parsed = buffers::ParseOutputAliases(header->value);
    if (!parsed) return parsed.error().WithContext("module header");
    aliases = std::move(*parsed);
  }
  // The other chip kinds, for the error of a program that does not fit:
  // which one would hold it.
  std::vector<buffers::HbmAlternative> alternatives;
  for (const runtime::ChipSpec& other : runtime::AllChips()) {
    if (other.name == out.chip->name) continue;
    const std::string name = devices > 1 ? std::to_string(devices) + " x " + std::string(other.name)
                                         : std::string(other.name);
    alternatives.push_back({name, other.hbm_bytes * devices});
  }
  Result<buffers::BufferAssignment> assigned =
      buffers::AssignBuffers(entry, out.plan, out.chip->hbm_bytes * devices, target, aliases, alternatives);
  if (!assigned) return assigned.error().WithContext("buffer assignment");
  out.buffers = std::move(*assigned);
  out.times.buffers_ms = watch.LapMs();

  out.cost = cost::EstimatePlan(entry, out.plan, *out.chip);
  out.estimated_us = out.cost.estimated_us();
  out.times.cost_ms = watch.LapMs();
  return out;
}

Result<CompiledPlan> PlanPrepared(const PreparedModule& prepared, const CompileOptions& options) {
  KILN_RETURN_IF_ERROR(CheckPlanFits(prepared, options));
  Stopwatch watch;
  fusion::PlannerOptions planner;
  planner.tiling = TilingOptionsFor(options, *runtime::FindChip(options.chip));
  Result<fusion::FusionPlan> plan = fusion::PlanComputation(*prepared.module->entry(), options.plan, planner);
  if (!plan) return plan.error().WithContext("planning");
  double planning_ms = watch.LapMs();
  KILN_ASSIGN_OR_RETURN(CompiledPlan out, CompletePlan(prepared, options, *std::move(plan)));
  out.times.planning_ms = planning_ms;
  return out;
}

Result<CompiledPlan> PlanModule(hlo::Module& module, const CompileOptions& options) {
  KILN_ASSIGN_OR_RETURN(PreparedModule prepared, PreparePasses(module, options));
  return PlanPrepared(prepared, options);
}

}  // namespace kiln::driver
