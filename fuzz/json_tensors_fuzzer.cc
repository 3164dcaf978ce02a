// libFuzzer harness: JSON inputs of POST /v1/executables/{key}/execute
// (the ExecuteRequest schema, server/api/json_tensors.h).
//
// Input: the parameter shapes on the first line, as one HLO shape (a tuple
// stands for its elements: "(f32[2,3], (s32[], bf16[4]))" is two
// parameters), then the JSON body. A body that is accepted must give
// literals of the parameters' shapes that write back to JSON and read again
// as the same values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/parser.h"
#include "fuzz/fuzz_check.h"
#include "server/api/execute_inputs.h"
#include "server/api/json_tensors.h"

namespace {

// Parameter shapes beyond this are skipped: the executable, not the
// request, chooses them, and the server refuses runs that do not fit.
constexpr int64_t kMaxParameterBytes = 1 << 20;

bool Small(const kiln::hlo::Shape& shape) {
  if (shape.IsTuple()) {
    for (const auto& element : shape.tuple_shapes()) {
      if (!Small(element)) return false;
    }
    return true;
  }
  return shape.IsArray() && shape.ByteSize() <= kMaxParameterBytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  auto shape = hlo::ParseShape(input.substr(0, newline));
  if (!shape || !Small(*shape)) return 0;
  std::vector<hlo::Shape> parameters =
      shape->IsTuple() ? shape->tuple_shapes() : std::vector<hlo::Shape>{*shape};

  auto inputs = api::InputsFromJson(input.substr(newline + 1), parameters);
  if (!inputs) return 0;
  for (size_t i = 0; i < inputs->size(); ++i) {
    const hlo::Literal& literal = (*inputs)[i];
    auto json = api::LiteralToJson(literal);
    if (!json) kiln::fuzz::FailCheck("an accepted input does not write as JSON", json.error().message);
    auto back = api::LiteralFromJson(*json, parameters[i], std::to_string(i));
    if (!back) kiln::fuzz::FailCheck("written JSON does not read back", back.error().message + " " + json->dump());
    if (!(*back == literal)) kiln::fuzz::FailCheck("JSON round trip changed the value", json->dump());
  }
  return 0;
}
