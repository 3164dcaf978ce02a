// libFuzzer harness: literal files (`name = <HLO literal>` lines), as
// `kiln run --input-literals` and the corpus expectation sidecars use them.
// Bad text must end in an error naming file:line, never a crash; accepted
// literals must print to text that parses back to the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/hlo/parser.h"
#include "fuzz/fuzz_check.h"
#include "runtime/io/literal_file.h"

namespace {

void CheckRoundTrip(const kiln::hlo::Literal& literal) {
  std::string text = literal.ToString();
  auto back = kiln::hlo::ParseLiteral(text);
  if (!back) kiln::fuzz::FailCheck("a printed literal does not parse", back.error().message + "\n" + text);
  if (!(*back == literal)) kiln::fuzz::FailCheck("literal round trip changed the value", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto file = runtime::io::ParseLiteralFile(text, "fuzz.txt");
  if (!file) return 0;
  (void)file->Arguments();
  for (const auto& [number, literal] : file->params) CheckRoundTrip(literal);
  if (file->result) CheckRoundTrip(*file->result);
  return 0;
}
