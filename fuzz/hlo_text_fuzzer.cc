// libFuzzer harness: the HLO text front end as POST /v1/compile and `kiln
// fingerprint` run it (parse, verify, fingerprint), plus the printer's
// contract that a verified module prints to text that parses back to an
// equal module with the same key (executables carry their kernels as
// printed HLO and parse them again when loaded).
//
// Any input ends in a module or an error; a crash, a hang, a leak or a
// broken round trip (reported with __builtin_trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module_equal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln::hlo;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = ParseModule(text, "fuzz.hlo");
  if (!module) return 0;
  if (!VerifyModule(**module)) return 0;
  auto fingerprint = FingerprintModule(**module, FingerprintOptions{});
  if (!fingerprint) kiln::fuzz::FailCheck("a verified module has no fingerprint", fingerprint.error().message);

  std::string printed = PrintModule(**module);
  auto reparsed = ParseModule(printed, "printed.hlo");
  if (!reparsed) kiln::fuzz::FailCheck("printed module does not parse", reparsed.error().message + "\n" + printed);
  std::string why;
  if (!ModulesEqual(**module, **reparsed, &why)) kiln::fuzz::FailCheck("printed module differs", why + "\n" + printed);
  auto again = FingerprintModule(**reparsed, FingerprintOptions{});
  if (!again || again->key != fingerprint->key) kiln::fuzz::FailCheck("printed module has another key", printed);
  return 0;
}
