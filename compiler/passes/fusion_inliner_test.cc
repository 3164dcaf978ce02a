#include "compiler/passes/fusion_inliner.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/passes/dead_code_elimination.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::FindInstruction;
using testing::ParseVerified;

TEST(FusionInlinerTest, ExpandsFusionsInPlaceAndKeepsOrder) {
  auto module = ParseVerified(R"(
HloModule m
fused {
  p0 = f32[128] parameter(0)
  p1 = f32[128] parameter(1)
  a = f32[128] add(p0, p1)
  ROOT n = f32[128] negate(a)
}
ENTRY e {
  x = f32[128] parameter(0)
  y = f32[128] parameter(1)
  f = f32[128] fusion(x, y), kind=kLoop, calls=fused
  ROOT e2 = f32[128] exponential(f)
})");
  ASSERT_NE(module, nullptr);
  auto changed = FusionInliner().Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(DeadCodeElimination().Run(*module).has_value());
  ASSERT_TRUE(hlo::VerifyModule(*module).has_value());
  EXPECT_EQ(FindInstruction(*module, "f"), nullptr);
  const hlo::Instruction* root = module->entry()->root();
  ASSERT_EQ(root->operand(0)->name(), "f.n");
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "f.a");
  EXPECT_EQ(root->operand(0)->operand(0)->operand(0)->name(), "x");
  // Operands come before users in the instruction list.
  for (const auto& instr : module->entry()->instructions()) {
    for (const hlo::Instruction* operand : instr->operands()) {
      EXPECT_LT(operand->index_in_parent(), instr->index_in_parent()) << instr->name();
    }
  }
  // The printed module parses back.
  EXPECT_TRUE(hlo::ParseModule(hlo::PrintModule(*module)).has_value());
}

TEST(FusionInlinerTest, MultiOutputFusionBecomesATupleOfClones) {
  auto module = ParseVerified(R"(
HloModule m
fused {
  p0 = f32[8] parameter(0)
  n = f32[8] negate(p0)
  x = f32[8] exponential(p0)
  ROOT t = (f32[8], f32[8]) tuple(n, x)
}
ENTRY e {
  p = f32[8] parameter(0)
  f = (f32[8], f32[8]) fusion(p), kind=kLoop, calls=fused
  g0 = f32[8] get-tuple-element(f), index=0
  g1 = f32[8] get-tuple-element(f), index=1
  ROOT s = f32[8] add(g0, g1)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(FusionInliner().Run(*module).has_value());
  ASSERT_TRUE(DeadCodeElimination().Run(*module).has_value());
  ASSERT_TRUE(hlo::VerifyModule(*module).has_value());
  const hlo::Instruction* g0 = FindInstruction(*module, "g0");
  ASSERT_NE(g0, nullptr);
  EXPECT_EQ(g0->operand(0)->name(), "f.t");
  EXPECT_EQ(g0->operand(0)->opcode(), hlo::Opcode::kTuple);
}

TEST(FusionInlinerTest, NothingToInlineIsNoChange) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})");
  ASSERT_NE(module, nullptr);
  auto changed = FusionInliner().Run(*module);
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace kiln::passes
