#include "server/service/tune_runner.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "runtime/format/parameter_shapes.h"
#include "runtime/io/literal_compare.h"
#include "runtime/io/random_inputs.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/kernel_timer.h"
#include "runtime/timing/timing_simulator.h"
#include "runtime/timing/timed_slice_execution.h"
#include "server/service/kernel_verification.h"

namespace kiln::service {

Result<autotune::Measurement> SimulatedRunner::Measure(std::span<const uint8_t> executable, bool strict_tiling) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedProgram> loaded, runtime::LoadedProgram::FromBytes(executable));
  const runtime::Program& program = loaded->program();
  // A slice's program is timed on its slice: collectives over its ICI.
  KILN_ASSIGN_OR_RETURN(runtime::timing::TimingOptions options, runtime::timing::ProgramSliceTiming(program, chip_));
  options.strict_tiling = strict_tiling;
  autotune::Measurement m;
  std::vector<runtime::timing::KernelProfile> profiles;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    if (before_kernel_) KILN_RETURN_IF_ERROR(before_kernel_());
    const runtime::ProgramKernel& kernel = program.kernels[k];
    std::vector<const hlo::Shape*> inputs, outputs;
    for (uint32_t b : kernel.inputs) inputs.push_back(&loaded->buffer_shape(b));
    for (uint32_t b : kernel.outputs) outputs.push_back(&loaded->buffer_shape(b));
    runtime::timing::KernelDescription d;
    d.name = kernel.name;
    d.kind = kernel.kind;
    d.module = &loaded->kernel_module(k);
    d.inputs = inputs;
    d.outputs = outputs;
    d.tiling = &kernel.tiling;
    autotune::KernelTime time;
    time.name = kernel.name;
    time.kind = kernel.kind;
    Result<runtime::timing::KernelProfile> profile = runtime::timing::TimeKernel(d, chip_, options);
    if (profile) {
      time.us = profile->seconds * 1e6;
      time.tiling = profile->tiling;
      for (const auto& step : profile->steps) time.steps.push_back({step.name, step.seconds * 1e6});
      m.kernel_us += time.us;
      profiles.push_back(*std::move(profile));
    } else {
      time.error = profile.error().ToString();
    }
    m.kernels.push_back(std::move(time));
  }
  // The device time as a run assembles it (collectives beside compute on a
  // slice), so a tuned entry answers what its runs report.
  m.device_us = m.ok() ? runtime::timing::AssembleRun(program, chip_, options, std::move(profiles)).seconds * 1e6
                       : m.kernel_us;
  return m;
}

Result<StubbedRun> SimulatedRunner::Evaluate(std::span<const uint8_t> executable) const {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedProgram> loaded, runtime::LoadedProgram::FromBytes(executable));
  const runtime::Program& program = loaded->program();
  if (!program.topology.empty()) {
    // Its collectives meet the other chips' values only on a whole slice,
    // which tuning does not run: the tuner then searches tiles alone.
    return FailedPreconditionError("a program for the " + program.topology +
                                   " slice: its outputs are compared only on the slice, which tuning does not run");
  }
  if (program.peak_hbm_bytes > static_cast<uint64_t>(memory_budget_)) {
    return ResourceExhaustedError("its values need " + std::to_string(program.peak_hbm_bytes) +
                                  " bytes at peak, over the " + std::to_string(memory_budget_) +
                                  "-byte evaluation budget");
  }
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Shape> shapes, runtime::ProgramParameterShapes(program));
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Literal> args, runtime::io::RandomArguments(shapes, seed_));
  runtime::EvalOptions options;
  options.step_budget = step_budget_;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (evaluation_limit_s_ > 0) {
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(evaluation_limit_s_));
  }
  return ExecuteWithStubs(*loaded, args, options, seed_, deadline, before_kernel_);
}

Status SimulatedRunner::SetReference(std::span<const uint8_t> executable, uint64_t seed) {
  seed_ = seed;
  reference_.reset();
  KILN_ASSIGN_OR_RETURN(StubbedRun result, Evaluate(executable));
  reference_ = std::move(result);
  return Ok();
}

Status SimulatedRunner::CompareToReference(std::span<const uint8_t> executable) {
  if (!reference_) return FailedPreconditionError("no reference outputs to compare with");
  Result<StubbedRun> result = Evaluate(executable);
  if (!result) return result.error().WithContext("running the candidate");
  Status same = CompareStubbedRuns(*reference_, *result);
  if (!same) return FailedPreconditionError("outputs differ from the heuristic's: " + same.error().ToString());
  return Ok();
}

Result<autotune::KernelCheck> SimulatedRunner::CompareChangedKernels(std::span<const uint8_t> reference,
                                                                     std::span<const uint8_t> candidate) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedProgram> before, runtime::LoadedProgram::FromBytes(reference));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedProgram> after, runtime::LoadedProgram::FromBytes(candidate));
  KILN_ASSIGN_OR_RETURN(KernelVerification checked, VerifyChangedKernels(*before, *after, CheckOptions()));
  return ToKernelCheck(std::move(checked));
}

Result<autotune::KernelCheck> SimulatedRunner::CompareModulePairs(const std::vector<autotune::ModulePair>& pairs) {
  std::vector<std::unique_ptr<hlo::Module>> modules;
  std::vector<ModuleCheck> checks;
  for (const autotune::ModulePair& pair : pairs) {
    Result<std::unique_ptr<hlo::Module>> reference = hlo::ParseModule(pair.reference_hlo, "reference.hlo");
    if (!reference) return reference.error().WithContext("body kernel " + pair.name + ", its instructions");
    Result<std::unique_ptr<hlo::Module>> candidate = hlo::ParseModule(pair.candidate_hlo, "candidate.hlo");
    if (!candidate) return candidate.error().WithContext("body kernel " + pair.name);
    checks.push_back({pair.name, reference->get(), candidate->get(), pair.instructions});
    modules.push_back(*std::move(reference));
    modules.push_back(*std::move(candidate));
  }
  KILN_ASSIGN_OR_RETURN(KernelVerification checked, VerifyModulePairs(checks, CheckOptions()));
  return ToKernelCheck(std::move(checked));
}

autotune::KernelCheck SimulatedRunner::ToKernelCheck(KernelVerification checked) {
  return autotune::KernelCheck{.changed_kernels = checked.changed_kernels,
                               .regions = checked.regions,
                               .compared_values = checked.compared_values,
                               .refused_instructions = std::move(checked.refused_instructions),
                               .refused_why = std::move(checked.refused_why)};
}

KernelVerificationOptions SimulatedRunner::CheckOptions() const {
  KernelVerificationOptions options;
  options.seed = seed_;
  options.memory_budget = memory_budget_;
  options.step_budget = step_budget_;
  // The evaluation limit bounds the whole check, between kernels: past it
  // the candidate is refused (the heuristic stays), never waited for.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (evaluation_limit_s_ > 0) {
    deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                      std::chrono::duration<double>(evaluation_limit_s_));
  }
  options.before_kernel = [this, deadline]() -> Status {
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      return DeadlineExceededError("the kernel-by-kernel check ran past its " + std::to_string(evaluation_limit_s_) +
                                   " s limit");
    }
    return before_kernel_ ? before_kernel_() : Ok();
  };
  return options;
}

}  // namespace kiln::service
