#include "compiler/stablehlo/bytecode_reader.h"

namespace kiln::stablehlo {

Result<MlirModule> ReadBytecode(std::string_view bytes, std::string_view name) {
  return UnimplementedError(std::string(name) + ": MLIR bytecode is not supported yet");
}

}  // namespace kiln::stablehlo
