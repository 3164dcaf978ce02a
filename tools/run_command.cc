#include "tools/run_command.h"

#include <chrono>
#include <span>

#include "compiler/hlo/instruction.h"
#include "runtime/eval/evaluator.h"
#include "runtime/io/literal_file.h"
#include "runtime/io/random_inputs.h"
#include "runtime/io/tensor_names.h"
#include "tools/load_module.h"

namespace kiln::tools {
namespace {

using runtime::io::NamedTensor;

std::vector<hlo::Shape> ParameterShapes(const hlo::Module& module) {
  std::vector<hlo::Shape> shapes;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    shapes.push_back(parameter->shape());
  }
  return shapes;
}

// The arguments from whichever input flag was given.
Result<std::vector<hlo::Literal>> LoadArguments(const hlo::Module& module,
                                                const RunOptions& options) {
  std::vector<hlo::Shape> shapes = ParameterShapes(module);
  int sources = !options.inputs_path.empty() + !options.input_literals_path.empty() +
                options.random_seed.has_value();
  if (sources > 1) {
    return MakeError("give at most one of --inputs, --input-literals and --random-inputs");
  }
  if (!options.inputs_path.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::io::SafetensorsFile file,
                          runtime::io::ReadSafetensorsFile(options.inputs_path));
    auto args = runtime::io::ArgumentsFromTensors(file, shapes);
    if (!args) return MakeError(options.inputs_path + ": " + args.error().message);
    return args;
  }
  if (!options.input_literals_path.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::io::LiteralFile file,
                          runtime::io::ReadLiteralFile(options.input_literals_path));
    auto args = file.Arguments();
    if (args) args = runtime::io::MatchArguments(std::move(*args), shapes);
    if (!args) return MakeError(options.input_literals_path + ": " + args.error().message);
    return args;
  }
  if (options.random_seed) return runtime::io::RandomArguments(module, *options.random_seed);
  if (!shapes.empty()) {
    return MakeError(options.module_path + ": the module has " + std::to_string(shapes.size()) +
                     " parameter(s); pass --inputs F.safetensors, --input-literals F.txt or "
                     "--random-inputs SEED");
  }
  return std::vector<hlo::Literal>{};
}

}  // namespace

Result<RunReport> RunModule(const RunOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                        LoadVerifiedModule(options.module_path));
  Status fits = runtime::io::CheckEvalMemory(*module, options.memory_budget);
  if (!fits) return MakeError(options.module_path + ": " + fits.error().message);
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Literal> args, LoadArguments(*module, options));

  runtime::EvalOptions eval_options;
  eval_options.step_budget = options.step_budget;
  auto start = std::chrono::steady_clock::now();
  auto result = runtime::EvaluateModule(*module, args, eval_options);
  auto elapsed = std::chrono::steady_clock::now() - start;
  if (!result) return MakeError(options.module_path + ": " + result.error().message);

  RunReport report;
  report.module_name = module->name();
  report.eval_ms = std::chrono::duration<double, std::milli>(elapsed).count();
  report.outputs = runtime::io::OutputTensors(*result);
  if (!options.outputs_path.empty()) {
    runtime::io::SafetensorsFile file;
    file.tensors = report.outputs;
    file.metadata["module"] = report.module_name;
    KILN_RETURN_IF_ERROR(runtime::io::WriteSafetensorsFile(options.outputs_path, file));
  }
  return report;
}

}  // namespace kiln::tools
