#include "tools/run_inputs.h"

#include <map>
#include <optional>
#include <string>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/parser.h"
#include "runtime/io/literal_file.h"
#include "runtime/io/random_inputs.h"
#include "runtime/io/safetensors.h"
#include "runtime/io/tensor_names.h"

namespace kiln::tools {
std::vector<hlo::Shape> ModuleParameterShapes(const hlo::Module& module) {
  std::vector<hlo::Shape> shapes;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    shapes.push_back(parameter->shape());
  }
  return shapes;
}

Result<std::vector<hlo::Literal>> ReadInputArguments(const RunOptions& options) {
  if (!options.inputs_path.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::io::SafetensorsFile file, runtime::io::ReadSafetensorsFile(options.inputs_path));
    std::vector<hlo::Literal> args;
    for (size_t i = 0; const hlo::Literal* tensor = file.Find(std::to_string(i)); ++i) args.push_back(*tensor);
    return args;
  }
  if (!options.input_literals_path.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::io::LiteralFile file, runtime::io::ReadLiteralFile(options.input_literals_path));
    auto args = file.Arguments();
    if (!args) return args.error().WithContext(options.input_literals_path);
    return args;
  }
  return std::vector<hlo::Literal>{};
}

Result<std::vector<hlo::Literal>> LoadArguments(std::span<const hlo::Shape> shapes,
                                                const RunOptions& options) {
  int sources = !options.inputs_path.empty() + !options.input_literals_path.empty() +
                options.random_seed.has_value();
  if (sources > 1) {
    return InvalidArgumentError("give at most one of --inputs, --input-literals and --random-inputs");
  }
  if (!options.inputs_path.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::io::SafetensorsFile file,
                          runtime::io::ReadSafetensorsFile(options.inputs_path));
    auto args = runtime::io::ArgumentsFromTensors(file, shapes);
    if (!args) return args.error().WithContext(options.inputs_path);
    return args;
  }
  if (!options.input_literals_path.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::io::LiteralFile file,
                          runtime::io::ReadLiteralFile(options.input_literals_path));
    auto args = file.Arguments();
    if (args) args = runtime::io::MatchArguments(std::move(*args), shapes);
    if (!args) return args.error().WithContext(options.input_literals_path);
    return args;
  }
  if (options.random_seed) return runtime::io::RandomArguments(shapes, *options.random_seed);
  if (!shapes.empty()) {
    return InvalidArgumentError(options.module_path + ": the module has " + std::to_string(shapes.size()) +
                                " parameter(s); pass --inputs F.safetensors, --input-literals F.txt or "
                                "--random-inputs SEED");
  }
  return std::vector<hlo::Literal>{};
}

}  // namespace kiln::tools
