#include "compiler/passes/common_subexpression_elimination.h"

#include <gtest/gtest.h>

#include "compiler/passes/dead_code_elimination.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::FindInstruction;
using testing::ParseVerified;

TEST(CommonSubexpressionEliminationTest, MergesIdenticalInstructionsIgnoringMetadata) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] add(p0, p1), metadata={op_name="first"}
  b = f32[4] add(p0, p1), metadata={op_name="second"}
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  ba = f32[4] broadcast(c1), dimensions={}
  bb = f32[4] broadcast(c2), dimensions={}
  ma = f32[4] multiply(a, ba)
  mb = f32[4] multiply(b, bb)
  ROOT r = (f32[4], f32[4]) tuple(ma, mb)
})");
  ASSERT_NE(module, nullptr);
  auto changed = CommonSubexpressionElimination().Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  hlo::Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(root->operand(0)->name(), "ma");
  ASSERT_TRUE(DeadCodeElimination().Run(*module).has_value());
  EXPECT_EQ(FindInstruction(*module, "b"), nullptr);
  EXPECT_EQ(FindInstruction(*module, "c2"), nullptr);
  EXPECT_EQ(FindInstruction(*module, "mb"), nullptr);
}

TEST(CommonSubexpressionEliminationTest, KeepsSideEffectsAndDifferentAttributes) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  p0 = f32[2,2] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4] rng(lo, hi), distribution=rng_uniform
  r2 = f32[4] rng(lo, hi), distribution=rng_uniform
  t1 = f32[2,2] transpose(p0), dimensions={1,0}
  t2 = f32[2,2] transpose(p0), dimensions={0,1}
  ROOT r = (f32[4], f32[4], f32[2,2], f32[2,2]) tuple(r1, r2, t1, t2)
})");
  ASSERT_NE(module, nullptr);
  auto changed = CommonSubexpressionElimination().Run(*module);
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(*changed);
  hlo::Instruction* root = module->entry()->root();
  EXPECT_NE(root->operand(0), root->operand(1));
  EXPECT_NE(root->operand(2), root->operand(3));
}

}  // namespace
}  // namespace kiln::passes
