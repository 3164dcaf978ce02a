#include "compiler/passes/algebraic_simplifier.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/verifier.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::ParseVerified;

// Runs the simplifier and returns the root afterwards.
const hlo::Instruction* SimplifiedRoot(hlo::Module& module, bool expect_change = true) {
  auto changed = AlgebraicSimplifier().Run(module);
  EXPECT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_EQ(changed.value_or(false), expect_change);
  EXPECT_TRUE(hlo::VerifyModule(module).has_value());
  return module.entry()->root();
}

TEST(AlgebraicSimplifierTest, MultiplyByBroadcastOneIsTheOperand) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[8,128] parameter(0)
  one = f32[] constant(1)
  ones = f32[8,128] broadcast(one), dimensions={}
  ROOT r = f32[8,128] multiply(ones, x)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->name(), "x");
}

TEST(AlgebraicSimplifierTest, AddZeroConstantIsTheOperand) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = s32[3] parameter(0)
  zeros = s32[3] constant({0, 0, 0})
  ROOT r = s32[3] add(x, zeros)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->name(), "x");
}

TEST(AlgebraicSimplifierTest, MultiplyByTwoIsKept) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  two = f32[] constant(2)
  twos = f32[4] broadcast(two), dimensions={}
  ROOT r = f32[4] multiply(x, twos)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module, /*expect_change=*/false)->name(), "r");
}

TEST(AlgebraicSimplifierTest, ReshapeOfReshapeBecomesOneReshape) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[2,3,4] parameter(0)
  a = f32[6,4] reshape(x)
  ROOT b = f32[24] reshape(a)
})");
  ASSERT_NE(module, nullptr);
  const hlo::Instruction* root = SimplifiedRoot(*module);
  EXPECT_EQ(root->name(), "b");
  EXPECT_EQ(root->operand(0)->name(), "x");
}

TEST(AlgebraicSimplifierTest, ReshapeBackToTheSourceShapeIsTheSource) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  a = f32[6] reshape(x)
  ROOT b = f32[2,3] reshape(a)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->name(), "x");
}

TEST(AlgebraicSimplifierTest, TransposesThatCancelAreRemoved) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[2,3,4] parameter(0)
  a = f32[4,2,3] transpose(x), dimensions={2,0,1}
  ROOT b = f32[2,3,4] transpose(a), dimensions={1,2,0}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->name(), "x");
}

TEST(AlgebraicSimplifierTest, TransposeOfTransposeComposes) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[2,3,4] parameter(0)
  a = f32[3,2,4] transpose(x), dimensions={1,0,2}
  ROOT b = f32[3,4,2] transpose(a), dimensions={0,2,1}
})");
  ASSERT_NE(module, nullptr);
  const hlo::Instruction* root = SimplifiedRoot(*module);
  EXPECT_EQ(root->operand(0)->name(), "x");
  auto dims = hlo::GetDimensions(*root);
  ASSERT_TRUE(dims.has_value());
  EXPECT_EQ(*dims, (std::vector<int64_t>{1, 2, 0}));
}

TEST(AlgebraicSimplifierTest, BroadcastOfScalarConstantToScalarIsTheConstant) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  c = f32[] constant(3)
  b = f32[] broadcast(c), dimensions={}
  x = f32[] parameter(0)
  ROOT r = f32[] subtract(x, b)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->operand(1)->name(), "c");
}

TEST(AlgebraicSimplifierTest, BroadcastOfBroadcastComposes) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  a = f32[2,3] broadcast(x), dimensions={1}
  ROOT b = f32[2,5,3] broadcast(a), dimensions={0,2}
})");
  ASSERT_NE(module, nullptr);
  const hlo::Instruction* root = SimplifiedRoot(*module);
  EXPECT_EQ(root->operand(0)->name(), "x");
  auto dims = hlo::GetDimensions(*root);
  ASSERT_TRUE(dims.has_value());
  EXPECT_EQ(*dims, (std::vector<int64_t>{2}));
}

TEST(AlgebraicSimplifierTest, NoOpSliceAndPadAreRemoved) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  s = f32[4,8] slice(x), slice={[0:4], [0:8]}
  zero = f32[] constant(0)
  ROOT p = f32[4,8] pad(s, zero), padding=0_0x0_0
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->name(), "x");
}

TEST(AlgebraicSimplifierTest, RealSliceIsKept) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  ROOT s = f32[2,8] slice(x), slice={[1:3], [0:8]}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module, /*expect_change=*/false)->name(), "s");
}

TEST(AlgebraicSimplifierTest, GetTupleElementOfTupleIsTheElement) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  t = (f32[4], f32[4]) tuple(x, n)
  g = f32[4] get-tuple-element(t), index=1
  ROOT r = f32[4] exponential(g)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifiedRoot(*module)->operand(0)->name(), "n");
}

}  // namespace
}  // namespace kiln::passes
