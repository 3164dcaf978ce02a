#include "runtime/spmd/global_arguments.h"

#include <string>
#include <utility>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/sharding.h"
#include "compiler/hlo/sharded_literal.h"

namespace kiln::runtime {
namespace {

Result<hlo::Shape> ParseSignatureShape(const std::string& text, const std::string& what) {
  Result<hlo::Shape> shape = hlo::ParseShape(text);
  if (!shape) return std::unexpected(DataLossError("executable: " + what + " shape '" + text + "' does not parse"));
  return shape;
}

Result<hlo::HloSharding> ParseSignatureSharding(const std::string& text, const std::string& what) {
  Result<hlo::HloSharding> sharding = hlo::ParseSharding(text);
  if (!sharding) {
    return std::unexpected(DataLossError("executable: " + what + " sharding '" + text + "' does not parse: " +
                                         sharding.error().message));
  }
  return sharding;
}

}  // namespace

bool TakesGlobalArguments(const Program& program) { return !program.result_sharding.empty(); }

Result<std::vector<hlo::Shape>> CallerParameterShapes(const Program& program, std::vector<hlo::Shape> own) {
  if (!TakesGlobalArguments(program)) return own;
  std::vector<hlo::Shape> shapes;
  for (size_t i = 0; i < program.global_parameter_shapes.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape,
                          ParseSignatureShape(program.global_parameter_shapes[i], "parameter " + std::to_string(i)));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

Result<std::vector<std::vector<hlo::Literal>>> ChipArguments(const Program& program, std::span<const hlo::Literal> args,
                                                             int64_t chips) {
  std::vector<std::vector<hlo::Literal>> out(chips);
  if (!TakesGlobalArguments(program)) {
    for (auto& chip : out) chip.assign(args.begin(), args.end());
    return out;
  }
  if (args.size() != program.parameter_shardings.size()) {
    return std::unexpected(InvalidArgumentError("the program takes " + std::to_string(program.parameter_shardings.size()) +
                                                " arguments, got " + std::to_string(args.size())));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string what = "parameter " + std::to_string(i);
    KILN_ASSIGN_OR_RETURN(hlo::Shape shape, ParseSignatureShape(program.global_parameter_shapes[i], what));
    if (!(args[i].shape().dimensions() == shape.dimensions() && args[i].shape().element_type() == shape.element_type())) {
      return std::unexpected(InvalidArgumentError("argument " + std::to_string(i) + " is " + args[i].shape().ToString() +
                                                  "; the program takes " + shape.ToString()));
    }
    KILN_ASSIGN_OR_RETURN(hlo::HloSharding sharding, ParseSignatureSharding(program.parameter_shardings[i], what));
    KILN_ASSIGN_OR_RETURN(std::vector<hlo::Literal> shards, hlo::SplitLiteral(args[i], sharding, chips));
    for (int64_t d = 0; d < chips; ++d) out[d].push_back(std::move(shards[d]));
  }
  return out;
}

Result<hlo::Literal> ProgramResult(const Program& program, std::vector<hlo::Literal> chip_results) {
  if (chip_results.empty()) return std::unexpected(InternalError("no chip returned a result"));
  if (!TakesGlobalArguments(program)) return std::move(chip_results[0]);
  KILN_ASSIGN_OR_RETURN(hlo::Shape shape, ParseSignatureShape(program.global_result_shape, "result"));
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding sharding, ParseSignatureSharding(program.result_sharding, "result"));
  return hlo::AssembleLiteral(chip_results, shape, sharding);
}

}  // namespace kiln::runtime
