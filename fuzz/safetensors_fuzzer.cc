// libFuzzer harness: safetensors bodies as POST /v1/executables/{key}/execute
// and `kiln run --inputs` read them. The reader must refuse bad bytes with
// an error; a file it accepts must write back to bytes that read as the
// same tensors, and must be taken apart into parameters (tensors "0", "1",
// ... as the execute route names them) without a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "runtime/io/safetensors.h"
#include "server/api/execute_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = runtime::io::ParseSafetensors(bytes);
  if (!file) return 0;

  auto written = runtime::io::SerializeSafetensors(*file);
  // Every tensor read has a dtype, so it can be written back.
  if (!written) kiln::fuzz::FailCheck("an accepted file does not serialize", written.error().message);
  auto reread = runtime::io::ParseSafetensors(*written);
  if (!reread) kiln::fuzz::FailCheck("a serialized file does not parse", reread.error().message);
  if (reread->tensors.size() != file->tensors.size() || reread->metadata != file->metadata) {
    kiln::fuzz::FailCheck("round trip changed the tensor list or metadata", "");
  }
  for (size_t i = 0; i < file->tensors.size(); ++i) {
    const auto& a = file->tensors[i];
    const auto& b = reread->tensors[i];
    if (a.name != b.name || !(a.value == b.value)) kiln::fuzz::FailCheck("round trip changed tensor", a.name);
  }

  // The execute route's view: parameters "0".."n-1" as the file has them.
  std::vector<hlo::Shape> parameters;
  while (const hlo::Literal* tensor = file->Find(std::to_string(parameters.size()))) {
    parameters.push_back(tensor->shape());
  }
  (void)api::InputsFromSafetensors(bytes, parameters);
  return 0;
}
