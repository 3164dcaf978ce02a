#include "compiler/passes/dead_code_elimination.h"

#include <gtest/gtest.h>

#include "compiler/hlo/verifier.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::FindInstruction;
using testing::ParseVerified;

TEST(DeadCodeEliminationTest, RemovesUnusedChainsAndKeepsIndicesDense) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  dead1 = f32[4] exponential(p0)
  dead2 = f32[4] add(dead1, p1)
  ROOT live = f32[4] multiply(p0, p1)
})");
  ASSERT_NE(module, nullptr);
  DeadCodeElimination dce;
  auto changed = dce.Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  EXPECT_EQ(module->entry()->instruction_count(), 3);
  EXPECT_EQ(FindInstruction(*module, "dead1"), nullptr);
  EXPECT_EQ(FindInstruction(*module, "dead2"), nullptr);
  for (int64_t i = 0; i < module->entry()->instruction_count(); ++i) {
    EXPECT_EQ(module->entry()->instructions()[i]->index_in_parent(), i);
  }
  EXPECT_TRUE(FindInstruction(*module, "p0")->users().size() == 1);
  EXPECT_TRUE(hlo::VerifyModule(*module).has_value());
  auto again = dce.Run(*module);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(*again);
}

TEST(DeadCodeEliminationTest, KeepsSideEffectsAndParameters) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  p0 = f32[] parameter(0)
  unused = f32[] parameter(1)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  noise = f32[4] rng(lo, hi), distribution=rng_uniform
  effect = f32[4] custom-call(p0), custom_call_target="log", custom_call_has_side_effect=true
  pure = f32[4] custom-call(p0), custom_call_target="pure"
  ROOT r = f32[] negate(p0)
})");
  ASSERT_NE(module, nullptr);
  auto changed = DeadCodeElimination().Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  EXPECT_NE(FindInstruction(*module, "noise"), nullptr);
  EXPECT_NE(FindInstruction(*module, "effect"), nullptr);
  EXPECT_NE(FindInstruction(*module, "unused"), nullptr);
  EXPECT_NE(FindInstruction(*module, "lo"), nullptr);  // operand of rng
  EXPECT_EQ(FindInstruction(*module, "pure"), nullptr);
  EXPECT_TRUE(hlo::VerifyModule(*module).has_value());
}

}  // namespace
}  // namespace kiln::passes
