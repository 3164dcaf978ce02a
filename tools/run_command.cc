#include "tools/run_command.h"

#include <chrono>
#include <functional>
#include <optional>
#include <filesystem>
#include <span>
#include <string_view>

#include "base/clock.h"
#include "compiler/driver/compile_module.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/attribute.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"
#include "runtime/eval/evaluator.h"
#include "runtime/format/parameter_shapes.h"
#include "runtime/io/tensor_names.h"
#include "runtime/program/loaded_program.h"
#include "runtime/spmd/global_arguments.h"
#include "runtime/timing/profile_output.h"
#include "runtime/timing/timed_execution.h"
#include "runtime/timing/timed_slice_execution.h"
#include "runtime/timing/timing_simulator.h"
#include "tools/load_module.h"
#include "tools/module_refinement.h"
#include "tools/run_inputs.h"

namespace kiln::tools {
namespace {

using Clock = std::chrono::steady_clock;

// What is left to the user when the values cannot be computed here.
constexpr std::string_view kTimingOnlyHint = "; --timing-only times it without computing values";

// Executable bytes start with the envelope's magic (executable_envelope.h).
bool IsExecutable(std::string_view bytes) {
  return bytes.starts_with(std::string_view("KILNEXE\0", 8));
}

Status WriteOutputs(const RunOptions& options, const RunReport& report) {
  if (options.outputs_path.empty() || !report.computed_values) return Ok();
  runtime::io::SafetensorsFile file;
  file.tensors = report.outputs;
  file.metadata["module"] = report.module_name;
  return runtime::io::WriteSafetensorsFile(options.outputs_path, file);
}

// Host evaluation keeps the buffers the device would: refuse an executable
// whose peak does not fit the budget before allocating any of it.
Status CheckProgramMemory(const runtime::Program& program, const RunOptions& options) {
  if (program.peak_hbm_bytes <= static_cast<uint64_t>(options.memory_budget)) return Ok();
  return ResourceExhaustedError(options.module_path + ": too large to evaluate: the executable needs " +
                                std::to_string(program.peak_hbm_bytes) + " bytes at peak, over the budget of " +
                                std::to_string(options.memory_budget) + " bytes" + std::string(kTimingOnlyHint));
}

Status CheckModuleMemory(const hlo::Module& module, const RunOptions& options) {
  Status fits = runtime::io::CheckEvalMemory(module, options.memory_budget);
  if (fits) return Ok();
  return Error::Coded(fits.error().code,
                      options.module_path + ": " + fits.error().ToString() + std::string(kTimingOnlyHint));
}

// A module header's `name=N` (replica_count, num_partitions); 1 when absent.
Result<int64_t> HeaderCount(const hlo::Module& module, std::string_view name) {
  const hlo::Attribute* a = module.FindAttribute(name);
  if (a == nullptr) return 1;
  Result<int64_t> n = hlo::DecodeInt(a->value);
  if (!n || *n < 1)
    return InvalidArgumentError("module header " + std::string(name) + "=" + std::string(a->value) +
                                " is not a positive count");
  return n;
}

// The timing flags for a run on `chip`: --dot-tiles, --scoped-vmem, the
// step budget and the --topology slice. On a slice, `module`'s header
// (replica_count x num_partitions, when more than one) must account for
// every chip and says how its copies fill them.
Result<runtime::timing::TimingOptions> MakeTimingOptions(const RunOptions& options, const runtime::ChipSpec& chip,
                                                         const hlo::Module* module = nullptr) {
  runtime::timing::TimingOptions timing;
  if (!options.dot_tiles.empty()) {
    KILN_ASSIGN_OR_RETURN(timing.dot_tiles, runtime::timing::ParseDotTiles(options.dot_tiles));
  }
  timing.scoped_vmem_bytes = options.scoped_vmem_bytes;
  timing.iteration_budget = static_cast<double>(options.step_budget);
  if (options.topology.empty()) return timing;
  Result<runtime::Topology> topology = runtime::ParseTopology(options.topology, chip);
  if (!topology) return InvalidArgumentError("--topology: " + topology.error().message);
  timing.topology = std::move(*topology);
  if (module == nullptr || timing.chips() == 1) return timing;
  KILN_ASSIGN_OR_RETURN(int64_t replicas, HeaderCount(*module, "replica_count"));
  KILN_ASSIGN_OR_RETURN(int64_t partitions, HeaderCount(*module, "num_partitions"));
  if (replicas * partitions == 1) return timing;
  if (replicas * partitions != timing.chips()) {
    return FailedPreconditionError(
        options.module_path + ": the module runs " + std::to_string(replicas) + " replica(s) x " +
        std::to_string(partitions) + " partition(s), but --topology " + options.topology + " has " +
        std::to_string(timing.chips()) + " chips; give a topology of " + std::to_string(replicas * partitions) +
        " chips");
  }
  timing.assignment = {replicas, partitions};
  return timing;
}

Result<const runtime::ChipSpec*> LookUpChip(const std::string& name) {
  const runtime::ChipSpec* chip = runtime::FindChip(name);
  if (chip == nullptr) {
    return InvalidArgumentError("unknown chip \"" + name + "\" (known: " + runtime::ChipNamesText() + ")");
  }
  return chip;
}

// A run that computes values: refused before anything starts when the
// evaluator cannot compute one of its instructions (a probe saw a Neuron
// graph fail 4.8 s in at an AwsNeuronGelu custom call).
Status CheckValuesComputable(const hlo::Module& module, const RunOptions& options) {
  Status evaluable = runtime::CheckEvaluable(module);
  if (evaluable) return Ok();
  return Error::Coded(evaluable.error().code,
                      options.module_path + ": " + evaluable.error().ToString() + std::string(kTimingOnlyHint));
}

// The checks a run recorded, when it ran any.
void SummarizeChecks(const runtime::CheckRecorder& checks, RunReport& report) {
  if (checks.passed() + checks.failed() == 0) return;
  report.checks = CheckSummary{checks.passed(), checks.failed(), checks.failures()};
}

// --direct: the module as written on the evaluator; no device time.
Result<RunReport> RunDirect(const RunOptions& options, const hlo::Module& module, const DimensionArguments& dims) {
  KILN_RETURN_IF_ERROR(CheckModuleMemory(module, options));
  KILN_RETURN_IF_ERROR(CheckValuesComputable(module, options));
  std::vector<hlo::Shape> shapes = ModuleParameterShapes(module);
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Literal> args, LoadArguments(shapes, options));
  if (options.random_seed) ApplyDimensionArguments(dims, args);
  runtime::EvalOptions eval_options;
  eval_options.step_budget = options.step_budget;
  runtime::CheckRecorder checks;
  eval_options.checks = &checks;
  auto start = Clock::now();
  auto result = runtime::EvaluateModule(module, args, eval_options);
  if (!result) return result.error().WithContext(options.module_path);
  RunReport report;
  SummarizeChecks(checks, report);
  report.module_name = module.name();
  report.eval_ms = MsSince(start);
  report.outputs = runtime::io::OutputTensors(*result);
  report.computed_values = true;
  return report;
}

// Runs (or, under --timing-only, only times) a loaded executable on `chip`.
// `args` is empty under --timing-only. A program for a slice runs on every
// chip of it: global arguments split by its parameter shardings and the
// global result assembled (a partitioned module), or the same arguments on
// every chip and chip 0's result (runtime/spmd/global_arguments.h).
Status RunExecutable(const RunOptions& options, const runtime::LoadedProgram& program,
                     const runtime::ChipSpec& chip, const runtime::timing::TimingOptions& timing,
                     std::span<const hlo::Literal> args, RunReport& report) {
  report.ran_executable = true;
  report.executable_key = program.program().key;
  report.plan = program.program().plan;
  if (options.timing_only) {
    auto profile = runtime::timing::SimulateProgram(program, chip, timing);
    if (!profile) return profile.error().WithContext(options.module_path);
    report.profile = std::move(*profile);
  } else {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::timing::ProgramTimer> timer,
                          runtime::timing::ProgramTimer::Create(program, chip, timing));
    runtime::EvalOptions eval_options;
    eval_options.step_budget = options.step_budget;
    runtime::CheckRecorder checks;
    eval_options.checks = &checks;
    auto start = Clock::now();
    Result<runtime::timing::DeviceProfile> profile = runtime::timing::DeviceProfile();
    if (!program.program().topology.empty()) {
      const runtime::SliceShape slice = runtime::timing::ProgramSliceShape(program.program(), timing.chips());
      KILN_ASSIGN_OR_RETURN(auto chip_args, runtime::ChipArguments(program.program(), args, slice.devices()));
      auto run = runtime::timing::ExecuteTimedOnSlice(program, *timer, slice, chip_args, eval_options);
      if (!run) return run.error().WithContext(options.module_path);
      KILN_ASSIGN_OR_RETURN(hlo::Literal result, runtime::ProgramResult(program.program(), std::move(run->results)));
      report.outputs = runtime::io::OutputTensors(result);
      profile = std::move(run->profile);
    } else {
      auto run = runtime::timing::ExecuteTimed(program, *timer, args, eval_options);
      if (!run) return run.error().WithContext(options.module_path);
      report.outputs = runtime::io::OutputTensors(run->result);
      profile = std::move(run->profile);
    }
    report.eval_ms = MsSince(start);
    report.computed_values = true;
    SummarizeChecks(checks, report);
    if (profile) {
      report.profile = std::move(*profile);
    } else {
      report.timing_error = profile.error().ToString();
    }
  }
  if (!options.trace_path.empty() && report.profile) {
    KILN_RETURN_IF_ERROR(runtime::timing::WriteChromeTrace(*report.profile, options.trace_path));
  }
  return Ok();
}

// A kiln executable file: run as it is, on the chip it was compiled for (as
// the server runs it); --chip naming another is refused, since its kernels,
// tiles and buffers were planned for that chip's VMEM and HBM.
Result<RunReport> RunExecutableFile(const RunOptions& options, std::span<const uint8_t> bytes) {
  auto loaded = runtime::LoadedProgram::FromBytes(bytes);
  if (!loaded) return loaded.error().WithContext(options.module_path);
  const runtime::Program& program = (*loaded)->program();
  KILN_ASSIGN_OR_RETURN(const runtime::ChipSpec* chip,
                        LookUpChip(options.chip.empty() ? program.chip : options.chip));
  if (chip->name != program.chip) {
    return FailedPreconditionError(options.module_path + " was compiled for " + program.chip + ", not " +
                                   std::string(chip->name) + ": run it without --chip, or compile the module for " +
                                   std::string(chip->name));
  }
  // A slice's program runs on the slice it was compiled for.
  RunOptions on_slice = options;
  if (!program.topology.empty()) {
    KILN_ASSIGN_OR_RETURN(std::string asked, driver::CanonicalTopology(options.topology, program.chip));
    if (!options.topology.empty() && asked != program.topology) {
      return FailedPreconditionError(options.module_path + " was compiled for the " + program.topology +
                                     " slice, not " + options.topology + ": run it without --topology");
    }
    on_slice.topology = program.topology;
  }
  KILN_ASSIGN_OR_RETURN(runtime::timing::TimingOptions timing, MakeTimingOptions(on_slice, *chip));
  RunReport report;
  report.module_name = std::filesystem::path(options.module_path).filename().string();
  report.topology = program.topology.empty() ? "one chip" : program.topology + " (compiled for it)";
  std::vector<hlo::Literal> args;
  if (!options.timing_only) {
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      KILN_RETURN_IF_ERROR(CheckValuesComputable((*loaded)->kernel_module(k), options));
    }
    KILN_RETURN_IF_ERROR(CheckProgramMemory(program, options));
    auto own = runtime::ProgramParameterShapes(program);
    if (!own) return own.error().WithContext(options.module_path);
    auto shapes = runtime::CallerParameterShapes(program, std::move(*own));
    if (!shapes) return shapes.error().WithContext(options.module_path);
    KILN_ASSIGN_OR_RETURN(args, LoadArguments(*shapes, options));
  }
  KILN_RETURN_IF_ERROR(RunExecutable(options, **loaded, *chip, timing, args, report));
  return report;
}

// HLO text: compile with the chosen plan, load the serialized executable
// back (the verified path a cache hit takes) and run it.
Result<RunReport> CompileAndRun(const RunOptions& options, hlo::Module& module, const DimensionArguments& dims) {
  driver::CompileOptions compile;
  if (!options.plan.empty()) {
    KILN_ASSIGN_OR_RETURN(compile.plan, driver::ParsePlanKind(options.plan));
  }
  if (!options.chip.empty()) compile.chip = options.chip;
  compile.scoped_vmem_bytes = options.scoped_vmem_bytes;
  KILN_ASSIGN_OR_RETURN(const runtime::ChipSpec* chip, LookUpChip(compile.chip));
  // A module for several devices runs on its own slice unless told.
  compile.topology = options.topology;
  Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(module, compile);
  if (!resolved) return resolved.error().WithContext(options.topology.empty() ? options.module_path : "--topology");
  RunOptions on_slice = options;
  on_slice.topology = compile.topology;
  // Fail on bad timing flags before compiling.
  KILN_ASSIGN_OR_RETURN(runtime::timing::TimingOptions timing, MakeTimingOptions(on_slice, *chip, &module));

  RunReport report;
  report.module_name = module.name();
  report.topology = driver::DescribeTopology(compile, *resolved);
  std::vector<hlo::Literal> args;
  if (!options.timing_only) {
    KILN_RETURN_IF_ERROR(CheckModuleMemory(module, options));
    KILN_RETURN_IF_ERROR(CheckValuesComputable(module, options));
    KILN_ASSIGN_OR_RETURN(args, LoadArguments(ModuleParameterShapes(module), options));
    if (options.random_seed) ApplyDimensionArguments(dims, args);
  }
  auto compiled = driver::CompileModule(module, compile);
  if (!compiled) {
    return Error::Coded(compiled.error().code,
                        options.module_path + ": " + compiled.error().ToString() +
                            (options.timing_only ? "" : "; --direct evaluates it without compiling"));
  }
  report.compiled_here = true;
  report.compile_ms = compiled->compile_ms;
  auto loaded = runtime::LoadedProgram::FromBytes(compiled->executable);
  if (!loaded) {
    return loaded.error().WithContext(options.module_path + ": compiled executable");
  }
  if (!options.timing_only) {
    KILN_RETURN_IF_ERROR(CheckProgramMemory((*loaded)->program(), options));
  }
  KILN_RETURN_IF_ERROR(RunExecutable(options, **loaded, *chip, timing, args, report));
  return report;
}

// The module or executable in `options.module_path`, run as the flags say.
Result<RunReport> RunFile(const RunOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(options.module_path));
  if (IsExecutable(bytes)) {
    if (options.direct || !options.plan.empty()) {
      return InvalidArgumentError(options.module_path + ": " + (options.direct ? "--direct" : "--plan") +
                                  " needs HLO text; this is a kiln executable");
    }
    return RunExecutableFile(
        options, std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                        ParseVerifiedModule(bytes, options.module_path));
  // Dynamic shapes are refined from --arg-shapes or the inputs' shapes.
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Shape> arg_shapes, ParseArgShapes(options.arg_shapes));
  std::vector<hlo::Literal> inputs;
  if (arg_shapes.empty() && !options.random_seed) {
    KILN_ASSIGN_OR_RETURN(inputs, ReadInputArguments(options));
  }
  KILN_ASSIGN_OR_RETURN(DimensionArguments dims, PrepareForCompile(*module, options.module_path, arg_shapes, inputs));
  return options.direct ? RunDirect(options, *module, dims) : CompileAndRun(options, *module, dims);
}

}  // namespace

Result<RunReport> RunModule(const RunOptions& options) {
  KILN_ASSIGN_OR_RETURN(RunReport report, RunFile(options));
  KILN_RETURN_IF_ERROR(WriteOutputs(options, report));
  return report;
}

}  // namespace kiln::tools
