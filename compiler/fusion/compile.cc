#include "compiler/fusion/compile.h"

#include <chrono>

#include "compiler/fusion/sharding.h"
#include "compiler/passes/pass_pipeline.h"

namespace kiln::fusion {
namespace {

class Stopwatch {
 public:
  double LapMs() {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

Result<PlanKind> ParsePlanKind(std::string_view name) {
  for (PlanKind kind : {PlanKind::kNone, PlanKind::kHeuristic, PlanKind::kGiven}) {
    if (PlanKindName(kind) == name) return kind;
  }
  return InvalidArgumentError("unknown plan '" + std::string(name) + "': expected none, heuristic or given");
}

Result<CompiledPlan> PlanModule(hlo::Module& module, const CompileOptions& options) {
  CompiledPlan out;
  out.chip = runtime::FindChip(options.chip);
  if (out.chip == nullptr) return InvalidArgumentError("unknown chip '" + options.chip + "'");
  if (module.entry() == nullptr) return InvalidArgumentError("module " + module.name() + " has no entry");
  if (options.scoped_vmem_bytes < 0) {
    return InvalidArgumentError("scoped VMEM must be positive, got " + std::to_string(options.scoped_vmem_bytes));
  }
  Stopwatch watch;
  if (options.run_passes) {
    passes::PipelineOptions pipeline_options;
    pipeline_options.verify = options.verify_passes;
    // Plans other than `given` start from the unfused graph.
    passes::PassPipeline pipeline =
        passes::MakeDefaultPipeline(pipeline_options, options.plan != PlanKind::kGiven);
    KILN_RETURN_IF_ERROR(pipeline.Run(module));
    out.changed_passes = pipeline.changed_passes();
  }
  out.times.passes_ms = watch.LapMs();

  PlannerOptions planner;
  planner.tiling.scoped_vmem_bytes =
      options.scoped_vmem_bytes > 0 ? options.scoped_vmem_bytes : out.chip->scoped_vmem_bytes;
  planner.tiling.mxu_size = out.chip->mxu_size;
  const hlo::Computation& entry = *module.entry();
  Result<FusionPlan> plan = PlanComputation(entry, options.plan, planner);
  if (!plan) return plan.error().WithContext("planning");
  out.plan = std::move(*plan);
  out.times.planning_ms = watch.LapMs();

  // A module with global shapes and sharding annotations runs over that
  // many chips: its buffers must fit their combined HBM.
  int64_t devices = ShardedDeviceCount(entry);
  out.devices = devices;
  std::string target = std::string(out.chip->name);
  if (devices > 1) target = std::to_string(devices) + " x " + target + " (sharding annotations)";
  Result<BufferAssignment> buffers =
      AssignBuffers(entry, out.plan, out.chip->hbm_bytes * devices, target);
  if (!buffers) return buffers.error().WithContext("buffer assignment");
  out.buffers = std::move(*buffers);
  out.times.buffers_ms = watch.LapMs();

  out.cost = EstimatePlan(entry, out.plan, *out.chip);
  out.estimated_us = out.cost.estimated_us();
  out.times.cost_ms = watch.LapMs();
  return out;
}

}  // namespace kiln::fusion
