#include "compiler/driver/prepared_module.h"

#include "compiler/driver/stopwatch.h"
#include "compiler/passes/pass_pipeline.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::driver {
namespace {

bool InlinesFusions(const CompileOptions& options) { return options.plan != fusion::PlanKind::kGiven; }

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

}  // namespace

Result<PreparedModule> PreparePasses(hlo::Module& module, const CompileOptions& options) {
  KILN_RETURN_IF_ERROR(CheckOptions(module, options));
  Stopwatch watch;
  PreparedModule out;
  out.module = &module;
  if (options.run_passes) {
    passes::PipelineOptions pipeline_options;
    pipeline_options.verify = options.verify_passes;
    passes::PassPipeline pipeline = passes::MakeDefaultPipeline(pipeline_options, InlinesFusions(options));
    KILN_RETURN_IF_ERROR(pipeline.Run(module));
    out.changed_passes = pipeline.changed_passes();
    out.passes_ran = true;
    out.fusions_inlined = InlinesFusions(options);
  }
  out.passes_ms = watch.LapMs();
  out.prepare_ms = out.passes_ms;
  return out;
}

Result<PreparedModule> PrepareModule(hlo::Module& module, const CompileOptions& options) {
  Stopwatch watch;
  const CompileOptions normalized = NormalizedOptions(options);
  KILN_ASSIGN_OR_RETURN(hlo::Fingerprint fingerprint,
                        hlo::FingerprintModule(module, FingerprintOptionsFor(normalized)));
  KILN_ASSIGN_OR_RETURN(PreparedModule out, PreparePasses(module, normalized));
  out.source_fingerprint = std::move(fingerprint);
  out.prepare_ms = watch.LapMs();
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
  return Ok();
}

}  // namespace kiln::driver
