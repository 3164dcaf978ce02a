// libFuzzer harness: the MLIR bytecode front end (VHLO portable
// artifacts) as the kiln commands run it: read with every bound checked,
// upgraded to StableHLO, converted to HLO, verified and fingerprinted.
//
// Any input ends in a module or an error; a crash, a hang, a leak or a
// verified module without a key (reported with __builtin_trap) is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/stablehlo/bytecode_reader.h"
#include "fuzz/stablehlo_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto mlir = stablehlo::ReadBytecode(bytes, "fuzz.mlir.bc");
  if (!mlir) return 0;
  fuzz::ConvertedAndKeyed(*mlir, nullptr);
  return 0;
}
