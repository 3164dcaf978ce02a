#include "compiler/passes/inliner.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/passes/dead_code_elimination.h"
#include "compiler/hlo/deep_modules_test_util.h"
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

int64_t CountOpcode(const hlo::Module& module, hlo::Opcode opcode) {
  int64_t n = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) n += instr->opcode() == opcode;
  }
  return n;
}

TEST(CallInlinerTest, NestedCallsExpandEverywhereAndTheShardingMovesToTheRoot) {
  auto module = ParseVerified(R"(
HloModule m
inner {
  a = f32[8] parameter(0)
  ROOT n = f32[8] negate(a)
}
outer {
  b = f32[8] parameter(0)
  c = f32[8] call(b), to_apply=inner
  ROOT e = f32[8] exponential(c)
}
body {
  s = f32[8] parameter(0)
  ROOT k = f32[8] call(s), to_apply=inner
}
cond {
  s = f32[8] parameter(0)
  ROOT f = pred[] constant(false)
}
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] call(x), to_apply=outer, sharding={devices=[2]0,1}
  w = f32[8] while(y), condition=cond, body=body
  ROOT z = f32[8] add(y, w)
})");
  ASSERT_NE(module, nullptr);
  auto changed = CallInliner().Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(hlo::VerifyModule(*module).has_value());
  EXPECT_EQ(CountOpcode(*module, hlo::Opcode::kCall), 0);
  // y's value is now outer's root, computed from inner's clones in place.
  const hlo::Instruction* root = module->entry()->root();
  const hlo::Instruction* y = root->operand(0);
  EXPECT_EQ(y->opcode(), hlo::Opcode::kExp);
  EXPECT_EQ(y->operand(0)->opcode(), hlo::Opcode::kNegate);
  EXPECT_EQ(y->operand(0)->operand(0)->name(), "x");
  ASSERT_NE(y->AttributeText("sharding"), nullptr);
  EXPECT_EQ(*y->AttributeText("sharding"), "{devices=[2]0,1}");
  // The while body computes its negate itself.
  ASSERT_EQ(root->operand(1)->called_computations().size(), 2u);
  const hlo::Instruction* body_root = root->operand(1)->called_computations()[1]->root();
  EXPECT_EQ(body_root->opcode(), hlo::Opcode::kNegate);
  EXPECT_TRUE(hlo::ParseModule(hlo::PrintModule(*module)).has_value());
}

TEST(CallInlinerTest, ExponentialCallTreesStopAtTheBudgetWithoutAddingCallSites) {
  // 18 levels, each calling the one below ten times: 10^17 negates if
  // expanded whole.
  auto module = ParseVerified(hlo::testing::FanOutCallModule(18, 10));
  ASSERT_NE(module, nullptr);
  const int64_t calls = CountOpcode(*module, hlo::Opcode::kCall);
  int64_t before = 0;
  for (const auto& computation : module->computations()) before += computation->instruction_count();
  auto changed = CallInliner(1000).Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(hlo::VerifyModule(*module).has_value());
  int64_t after = 0;
  for (const auto& computation : module->computations()) after += computation->instruction_count();
  EXPECT_LE(after, before + 1000);
  EXPECT_LE(CountOpcode(*module, hlo::Opcode::kCall), calls);
  EXPECT_GT(CountOpcode(*module, hlo::Opcode::kCall), 0);
}

}  // namespace
}  // namespace kiln::passes
