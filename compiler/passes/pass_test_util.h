// Test support for pass and planner tests: parse HLO text, find
// instructions by name. Header-only, for *_test.cc files.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string_view>

#include "compiler/hlo/module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/eval/evaluator.h"

namespace kiln::passes::testing {

// Parses and verifies `text`; fails the test (and returns nullptr) otherwise.
inline std::unique_ptr<hlo::Module> ParseVerified(std::string_view text) {
  auto module = hlo::ParseModule(text, "test.hlo");
  EXPECT_TRUE(module.has_value()) << (module ? "" : module.error().ToString());
  if (!module) return nullptr;
  auto verified = hlo::VerifyModule(**module);
  EXPECT_TRUE(verified.has_value()) << (verified ? "" : verified.error().ToString());
  return std::move(*module);
}

// The entry instruction named `name`, or nullptr.
inline hlo::Instruction* FindInstruction(const hlo::Module& module, std::string_view name) {
  for (const auto& instr : module.entry()->instructions()) {
    if (instr->name() == name) return instr.get();
  }
  return nullptr;
}

// Evaluates `before` and `after` on `args`; fails the test unless both
// evaluate and give equal results. For passes that must not change values.
inline void ExpectSameResults(const hlo::Module& before, const hlo::Module& after,
                              std::span<const hlo::Literal> args) {
  auto want = runtime::EvaluateModule(before, args);
  auto got = runtime::EvaluateModule(after, args);
  ASSERT_TRUE(want) << want.error().ToString();
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_TRUE(*want == *got);
}

}  // namespace kiln::passes::testing
