#include "compiler/stablehlo/frontend.h"

#include "compiler/hlo/parser.h"
#include "compiler/stablehlo/bytecode_reader.h"
#include "compiler/stablehlo/shape_refinement.h"
#include "compiler/stablehlo/text_parser.h"

namespace kiln::stablehlo {

ModuleFormat DetectModuleFormat(std::string_view bytes) {
  if (bytes.starts_with(std::string_view("ML\xef" "R", 4))) return ModuleFormat::kMlirBytecode;
  if (LooksLikeMlirText(bytes)) return ModuleFormat::kMlirText;
  return ModuleFormat::kHloText;
}

std::string_view ModuleFormatName(ModuleFormat format) {
  switch (format) {
    case ModuleFormat::kHloText: return "HLO text";
    case ModuleFormat::kMlirText: return "StableHLO text";
    case ModuleFormat::kMlirBytecode: return "MLIR bytecode";
  }
  return "unknown";
}

Result<std::unique_ptr<hlo::Module>> ParseAnyModule(std::string_view bytes, std::string_view name,
                                                    const ConvertOptions& options) {
  const ModuleFormat format = DetectModuleFormat(bytes);
  std::unique_ptr<hlo::Module> module;
  if (format == ModuleFormat::kHloText) {
    KILN_ASSIGN_OR_RETURN(module, hlo::ParseModule(bytes, name));
  } else {
    ConvertOptions with_name = options;
    with_name.filename = std::string(name);
    Result<MlirModule> mlir =
        format == ModuleFormat::kMlirText ? ParseMlirText(bytes, name) : ReadBytecode(bytes, name);
    if (!mlir) return std::unexpected(mlir.error());
    KILN_ASSIGN_OR_RETURN(module, ConvertToHlo(*mlir, with_name));
  }
  if (!options.argument_shapes.empty() || !options.argument_values.empty()) {
    Status refined = RefineShapes(*module, {options.argument_shapes, options.argument_values});
    if (!refined) return refined.error().WithContext(std::string(name));
  }
  return module;
}

}  // namespace kiln::stablehlo
