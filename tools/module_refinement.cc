#include "tools/module_refinement.h"

#include "compiler/hlo/parser.h"
#include "compiler/stablehlo/argument_refinement.h"
#include "compiler/stablehlo/refusals.h"

namespace kiln::tools {

Result<std::vector<hlo::Shape>> ParseArgShapes(std::string_view text) {
  Result<std::vector<hlo::Shape>> shapes = hlo::ParseShapeList(text);
  if (!shapes) return std::unexpected(shapes.error().WithContext("--arg-shapes"));
  return shapes;
}

Result<DimensionArguments> PrepareForCompile(hlo::Module& module, const std::string& path,
                                             const std::vector<hlo::Shape>& arg_shapes,
                                             const std::vector<hlo::Literal>& input_arguments) {
  Result<DimensionArguments> dims = stablehlo::RefineFromArguments(module, arg_shapes, input_arguments);
  if (!dims) return std::unexpected(dims.error().WithContext(path));
  Status compilable = stablehlo::RefuseUncompilable(module);
  if (!compilable) return compilable.error().WithContext(path);
  return dims;
}

}  // namespace kiln::tools
