#include "compiler/driver/prepared_module.h"

#include "compiler/driver/plan_module.h"
#include "compiler/driver/stopwatch.h"
#include "compiler/fusion/body_fusion.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/passes/inliner.h"
#include "compiler/passes/pass_pipeline.h"
#include "compiler/spmd/entry_shardings.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"

namespace kiln::driver {
namespace {

bool InlinesFusions(const CompileOptions& options) { return options.plan != fusion::PlanKind::kGiven; }

// The heuristic and the tuner's plans start from fused loop bodies and
// branches (body_fusion.h); `none` and `given` keep them as they are.
bool FusesBodies(const CompileOptions& options) {
  return options.plan == fusion::PlanKind::kHeuristic || options.plan == fusion::PlanKind::kTuned;
}

Status CheckOptions(const hlo::Module& module, const CompileOptions& options) {
  if (runtime::FindChip(options.chip) == nullptr) {
    return InvalidArgumentError("unknown chip '" + options.chip + "'");
  }
  if (module.entry() == nullptr) return InvalidArgumentError("module " + module.name() + " has no entry");
  if (options.scoped_vmem_bytes < 0) {
    return InvalidArgumentError("scoped VMEM must be positive, got " + std::to_string(options.scoped_vmem_bytes));
  }
  return Ok();
}

// The chips `options.topology` names (1 without one).
Result<int64_t> SliceChips(const CompileOptions& options) {
  if (options.topology.empty()) return 1;
  KILN_ASSIGN_OR_RETURN(runtime::Topology topology,
                        runtime::ParseTopology(options.topology, *runtime::FindChip(options.chip)));
  return topology.chips();
}

// The entry signature of a module partitioned over `chips` devices.
Result<PreparedModule::GlobalSignature> GlobalSignatureOf(const hlo::Module& module, int64_t chips) {
  PreparedModule::GlobalSignature signature;
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::HloSharding> parameters, spmd::EntryParameterShardings(module, chips));
  const auto& params = module.entry()->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    signature.parameter_shapes.push_back(params[i]->shape().ToString());
    signature.parameter_shardings.push_back(parameters[i].ToString());
  }
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding root, spmd::EntryRootSharding(module, chips));
  signature.result_shape = module.entry()->root()->shape().ToString();
  signature.result_sharding = root.ToString();
  return signature;
}

// For a compile for a slice: the module's per-device program (null when the
// module already is one, or runs replicated), or why it cannot run there.
Result<std::shared_ptr<hlo::Module>> PartitionForSlice(const hlo::Module& module, const CompileOptions& options) {
  KILN_ASSIGN_OR_RETURN(int64_t chips, SliceChips(options));
  if (options.topology.empty()) return nullptr;
  if (spmd::NeedsPartitioning(module)) {
    Result<std::unique_ptr<hlo::Module>> partitioned = spmd::PartitionModule(module, chips);
    if (!partitioned) return std::unexpected(partitioned.error().WithContext("partitioning for the " + options.topology + " slice"));
    return std::shared_ptr<hlo::Module>(std::move(*partitioned));
  }
  const int64_t devices = spmd::ModuleDeviceCount(module);
  if (devices != 1 && devices != chips) {
    return InvalidArgumentError("module " + module.name() + " is a program for " + std::to_string(devices) +
                                " devices (its header, shardings or replica groups say so), but the " +
                                options.topology + " slice has " + std::to_string(chips) + " chips");
  }
  return nullptr;
}

// PreparePasses; with `keep_unfused`, the program is printed before its
// bodies are fused (PreparedModule::unfused_bodies_text).
Result<PreparedModule> RunPasses(hlo::Module& module, const CompileOptions& options, bool keep_unfused) {
  KILN_RETURN_IF_ERROR(CheckOptions(module, options));
  Stopwatch watch;
  PreparedModule out;
  if (options.run_passes && InlinesFusions(options) && !options.topology.empty()) {
    // Calls are expanded before sharding propagation, as XLA does, so
    // that a call's results take the shardings their users want.
    Result<bool> inlined = passes::CallInliner().Run(module);
    if (!inlined) return std::unexpected(inlined.error().WithContext("pass inline-calls"));
  }
  KILN_ASSIGN_OR_RETURN(out.partitioned, PartitionForSlice(module, options));
  if (out.partitioned) {
    KILN_ASSIGN_OR_RETURN(int64_t chips, SliceChips(options));
    KILN_ASSIGN_OR_RETURN(out.global_signature, GlobalSignatureOf(module, chips));
  }
  hlo::Module& program = out.partitioned ? *out.partitioned : module;
  out.module = &program;
  if (options.run_passes) {
    passes::PipelineOptions pipeline_options;
    pipeline_options.verify = options.verify_passes;
    passes::PassPipeline pipeline = passes::MakeDefaultPipeline(pipeline_options, InlinesFusions(options));
    KILN_RETURN_IF_ERROR(pipeline.Run(program));
    out.changed_passes = pipeline.changed_passes();
    out.passes_ran = true;
    out.fusions_inlined = InlinesFusions(options);
    out.has_control_flow_bodies = fusion::HasControlFlowBodies(program);
    if (FusesBodies(options) && out.has_control_flow_bodies) {
      if (keep_unfused) out.unfused_bodies_text = std::make_shared<const std::string>(hlo::PrintModule(program));
      fusion::PlannerOptions planner;
      planner.tiling = TilingOptionsFor(options, *runtime::FindChip(options.chip));
      Result<fusion::BodyFusionStats> fused = fusion::FuseControlFlowBodies(program, planner);
      if (!fused) return std::unexpected(fused.error().WithContext("fusing loop bodies"));
      if (fused->fusions > 0) out.changed_passes.push_back("fuse-bodies");
      out.bodies_fused = true;
      out.body_decisions = std::move(fused->decisions);
    }
  }
  out.passes_ms = watch.LapMs();
  out.prepare_ms = out.passes_ms;
  return out;
}

Result<PreparedModule> Prepare(hlo::Module& module, const CompileOptions& options, bool keep_unfused) {
  Stopwatch watch;
  const CompileOptions normalized = NormalizedOptions(options);
  KILN_ASSIGN_OR_RETURN(hlo::Fingerprint fingerprint,
                        hlo::FingerprintModule(module, FingerprintOptionsFor(normalized)));
  KILN_ASSIGN_OR_RETURN(PreparedModule out, RunPasses(module, normalized, keep_unfused));
  out.source_fingerprint = std::move(fingerprint);
  out.prepare_ms = watch.LapMs();
  return out;
}

}  // namespace

Result<PreparedModule> PreparePasses(hlo::Module& module, const CompileOptions& options) {
  return RunPasses(module, options, /*keep_unfused=*/false);
}

Result<PreparedModule> PrepareModule(hlo::Module& module, const CompileOptions& options) {
  return Prepare(module, options, /*keep_unfused=*/false);
}

Result<PreparedModule> PrepareModuleForTuning(hlo::Module& module, const CompileOptions& options) {
  return Prepare(module, options, /*keep_unfused=*/true);
}

Result<PreparedModule> WithBodyFlips(const PreparedModule& prepared, const CompileOptions& options,
                                     const fusion::BodyFlips& flips) {
  if (!prepared.unfused_bodies_text) {
    return FailedPreconditionError("the module was prepared without its unfused bodies: prepare it for tuning");
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> program,
                        hlo::ParseModule(*prepared.unfused_bodies_text, "unfused-bodies.hlo"));
  const hlo::Computation& entry = *prepared.module->entry();
  if (program->entry() == nullptr || program->entry()->instructions().size() != entry.instructions().size()) {
    return InternalError("the unfused program of " + prepared.module->name() + " does not read back with its entry");
  }
  fusion::PlannerOptions planner;
  planner.tiling = TilingOptionsFor(options, *runtime::FindChip(options.chip));
  Result<fusion::BodyFusionStats> fused = fusion::FuseControlFlowBodies(*program, planner, flips);
  if (!fused) return std::unexpected(fused.error().WithContext("fusing loop bodies"));
  PreparedModule out = prepared;
  out.body_decisions = std::move(fused->decisions);
  out.body_flips = flips;
  out.variant = std::shared_ptr<const hlo::Module>(std::move(program));
  out.module = out.variant.get();
  return out;
}

Status CheckPlanFits(const PreparedModule& prepared, const CompileOptions& options) {
  if (prepared.module == nullptr) return FailedPreconditionError("the module was not prepared");
  KILN_RETURN_IF_ERROR(CheckOptions(*prepared.module, options));
  if (prepared.passes_ran && prepared.fusions_inlined != InlinesFusions(options)) {
    return FailedPreconditionError(
        "plan " + std::string(fusion::PlanKindName(options.plan)) + " needs XLA's fusions " +
        (InlinesFusions(options) ? "inlined" : "kept") + ", but the module was prepared with them " +
        (prepared.fusions_inlined ? "inlined" : "kept") + ": prepare it again for this plan");
  }
  if (prepared.passes_ran && prepared.has_control_flow_bodies && prepared.bodies_fused != FusesBodies(options)) {
    return FailedPreconditionError("plan " + std::string(fusion::PlanKindName(options.plan)) + " needs loop bodies " +
                                   (FusesBodies(options) ? "fused" : "unfused") + ", but the module was prepared with them " +
                                   (prepared.bodies_fused ? "fused" : "unfused") + ": prepare it again for this plan");
  }
  return Ok();
}

}  // namespace kiln::driver
