// Helpers shared by the verifier unit tests (verifier_*test.cc): scalar
// reducers and comparators, a module wrapper, and assertions that a module
// verifies or fails at a named instruction. Test-only code.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "compiler/hlo/module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"

namespace kiln::hlo::verifier_testing {

inline ::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Scalar reducers and comparators for the test modules (WithEntry adds them).
inline constexpr std::string_view kHelpers = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}
)";

// A module with the helpers and an entry computation `main` with `body`.
inline std::string WithEntry(std::string_view body, std::string_view extra = "") {
  return "HloModule test\n" + std::string(kHelpers) + std::string(extra) + "\nENTRY main {\n" +
         std::string(body) + "\n}\n";
}

inline std::unique_ptr<Module> Parse(const std::string& text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_TRUE(m.has_value()) << m.error().ToString() << "\n" << text;
  return m ? std::move(*m) : nullptr;
}

inline ::testing::AssertionResult Verifies(const std::string& text, VerifierOptions options = {}) {
  std::unique_ptr<Module> m = Parse(text);
  if (!m) return ::testing::AssertionFailure() << "does not parse";
  Status s = VerifyModule(*m, options);
  if (s) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.error().ToString() << "\n" << text;
}

// Verification fails, naming `instruction` (in computation `computation`)
// and containing `what`.
inline ::testing::AssertionResult FailsAt(const std::string& text, std::string_view instruction,
                                   std::string_view what, std::string_view computation = "main",
                                   VerifierOptions options = {}) {
  std::unique_ptr<Module> m = Parse(text);
  if (!m) return ::testing::AssertionFailure() << "does not parse";
  Status s = VerifyModule(*m, options);
  if (s) return ::testing::AssertionFailure() << "verified but should not:\n" << text;
  const std::string where =
      "instruction %" + std::string(instruction) + " in computation %" + std::string(computation);
  ::testing::AssertionResult r = Contains(s.error().ToString(), where);
  if (!r) return r;
  return Contains(s.error().ToString(), what);
}

}  // namespace kiln::hlo::verifier_testing
