#include "compiler/passes/layout_bitcasts.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/passes/pass_pipeline.h"
#include "compiler/passes/pass_test_util.h"
#include "runtime/eval/evaluator.h"

namespace kiln::passes {
namespace {

using testing::FindInstruction;
using testing::ParseVerified;

// The root of a one-instruction module over parameter p of `operand` type.
bool RootIsNoOp(const std::string& operand, const std::string& result, const std::string& op) {
  auto module = ParseVerified("HloModule m\nENTRY e {\n  p = " + operand + " parameter(0)\n  ROOT r = " + result +
                              " " + op + "\n}\n");
  return module != nullptr && IsPhysicalNoOp(*module->entry()->root());
}

TEST(LayoutBitcastsTest, ATransposeIntoItsOperandsMemoryOrderIsANoOp) {
  // A scan's stacked weights, transposed into the order they lie in.
  EXPECT_TRUE(RootIsNoOp("f32[128,126,64]{2,1,0}", "f32[126,128,64]{2,0,1}", "transpose(p), dimensions={1,0,2}"));
  // Moving a dimension of extent 1 moves no bytes.
  EXPECT_TRUE(RootIsNoOp("f32[1,512,128]{2,1,0}", "f32[512,1,128]{2,1,0}", "transpose(p), dimensions={1,0,2}"));
  // A real transpose.
  EXPECT_FALSE(RootIsNoOp("f32[4,8]{1,0}", "f32[8,4]{1,0}", "transpose(p), dimensions={1,0}"));
  EXPECT_FALSE(RootIsNoOp("f32[128,126,64]{2,1,0}", "f32[126,128,64]{2,1,0}", "transpose(p), dimensions={1,0,2}"));
}

TEST(LayoutBitcastsTest, ACopyIntoTheSameLayoutIsANoOp) {
  EXPECT_TRUE(RootIsNoOp("bf16[8,1024]{1,0}", "bf16[8,1024]{1,0}", "copy(p)"));
  EXPECT_FALSE(RootIsNoOp("bf16[8,1024]{1,0}", "bf16[8,1024]{0,1}", "copy(p)"));
}

TEST(LayoutBitcastsTest, AReshapeKeepingTheTiledDimensionsIsANoOp) {
  EXPECT_TRUE(RootIsNoOp("bf16[1,8192,512]", "bf16[8192,512]", "reshape(p)"));
  EXPECT_TRUE(RootIsNoOp("f32[2,3,64,128]", "f32[6,64,128]", "reshape(p)"));  // majors merge
  // The minor dimensions change: the (8,128) tiles hold other elements.
  EXPECT_FALSE(RootIsNoOp("f32[64,4096]", "f32[64,32,128]", "reshape(p)"));
  EXPECT_FALSE(RootIsNoOp("f32[8,128]", "f32[1024]", "reshape(p)"));
  // Not in row-major memory order.
  EXPECT_FALSE(RootIsNoOp("f32[6,64,128]{2,0,1}", "f32[2,3,64,128]", "reshape(p)"));
}

// Rows split or merged in whole sublane tiles (8 rows of f32, 16 of bf16)
// group into the same tiles: torch_xla's views of a matmul's result.
TEST(LayoutBitcastsTest, AReshapeOfWholeRowTilesIsANoOp) {
  EXPECT_TRUE(RootIsNoOp("bf16[512,768]", "bf16[4,128,768]", "reshape(p)"));
  EXPECT_TRUE(RootIsNoOp("f32[4,8,256]", "f32[32,256]", "reshape(p)"));
  // 8 rows per batch pad to a 16-row bf16 tile each: the bytes move.
  EXPECT_FALSE(RootIsNoOp("bf16[64,768]", "bf16[8,8,768]", "reshape(p)"));
  EXPECT_FALSE(RootIsNoOp("f32[12,256]", "f32[3,4,256]", "reshape(p)"));
}

// A no-op reshape between a dot and its elementwise epilogue stays a
// reshape, for the planner to fuse as the dot's epilogue.
TEST(LayoutBitcastsTest, AMoveBetweenADotAndItsEpilogueStaysAMove) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = bf16[512,768] parameter(0)
  w = bf16[768,768] parameter(1)
  r = bf16[4,128,768] parameter(2)
  d = bf16[512,768] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  view = bf16[4,128,768] reshape(d)
  ROOT y = bf16[4,128,768] add(view, r)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(LayoutBitcasts().Run(*module).has_value());
  EXPECT_EQ(FindInstruction(*module, "view")->opcode(), hlo::Opcode::kReshape);
}

// The pipeline rewrites the moves to bitcasts and drops the moves; every
// value stays what it was.
TEST(LayoutBitcastsTest, ThePipelineLeavesBitcastsThatComputeTheSameValues) {
  const std::string text = R"(
HloModule m
ENTRY e {
  p = f32[4,3,8]{2,1,0} parameter(0)
  t = f32[3,4,8]{2,0,1} transpose(p), dimensions={1,0,2}
  c = f32[3,4,8]{2,0,1} copy(t)
  e = f32[3,4,8]{2,0,1} exponential(c)
  r = f32[4,1,3,8]{3,2,1,0} reshape(p)
  s = f32[3,4,8]{2,1,0} transpose(p), dimensions={1,0,2}
  ROOT out = (f32[3,4,8]{2,0,1}, f32[4,1,3,8]{3,2,1,0}, f32[3,4,8]{2,1,0}) tuple(e, r, s)
})";
  auto before = ParseVerified(text);
  auto after = ParseVerified(text);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(MakeDefaultPipeline().Run(*after));
  int bitcasts = 0, transposes = 0, copies = 0, reshapes = 0;
  for (const auto& instr : after->entry()->instructions()) {
    bitcasts += instr->opcode() == hlo::Opcode::kBitcast;
    transposes += instr->opcode() == hlo::Opcode::kTranspose;
    copies += instr->opcode() == hlo::Opcode::kCopy;
    reshapes += instr->opcode() == hlo::Opcode::kReshape;
  }
  EXPECT_EQ(bitcasts, 3);    // t, its copy c (then a bitcast of a bitcast), r
  EXPECT_EQ(transposes, 1);  // s moves bytes
  EXPECT_EQ(copies, 0);
  EXPECT_EQ(reshapes, 0);
  ASSERT_NE(FindInstruction(*after, "t"), nullptr);
  EXPECT_EQ(FindInstruction(*after, "t")->opcode(), hlo::Opcode::kBitcast);

  hlo::Literal p(hlo::Shape(hlo::PrimitiveType::kF32, {4, 3, 8}));
  for (int64_t i = 0; i < p.element_count(); ++i) p.Set<float>(i, static_cast<float>(i) * 0.01f - 0.4f);
  auto want = runtime::EvaluateModule(*before, std::vector<hlo::Literal>{p});
  auto got = runtime::EvaluateModule(*after, std::vector<hlo::Literal>{p});
  ASSERT_TRUE(want) << want.error().ToString();
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_TRUE(*want == *got) << want->ToString() << "\nvs\n" << got->ToString();
}

// A move whose operand it alone reads, between two ops a loop fusion
// computes, stays a move: the fusion planner fuses it with both, where a
// bitcast (a buffer alias) would leave its operand in HBM. Moves next to a
// parameter, a dot or an operand read twice still become bitcasts.
TEST(LayoutBitcastsTest, AMoveBetweenLoopFusibleOpsStaysAMove) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[1,64,256] parameter(0)
  w = f32[256,128] parameter(1)
  n = f32[1,64,256] negate(x)
  between = f32[64,256] reshape(n)
  c = bf16[64,256] convert(between)
  m = f32[1,64,256] exponential(x)
  shared = f32[64,256] reshape(m)
  s = f32[64,256] sqrt(shared)
  t = f32[1,64,256] tanh(x)
  into_dot = f32[64,256] reshape(t)
  d = f32[64,128] dot(into_dot, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  of_param = f32[64,256] reshape(x)
  a = f32[64,256] abs(of_param)
  ROOT out = (bf16[64,256], f32[64,256], f32[1,64,256], f32[64,128], f32[64,256]) tuple(c, s, m, d, a)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(LayoutBitcasts().Run(*module).has_value());
  auto opcode_of = [&](const char* name) {
    const hlo::Instruction* instr = FindInstruction(*module, name);
    return instr == nullptr ? hlo::Opcode::kParameter : instr->opcode();
  };
  EXPECT_EQ(opcode_of("between"), hlo::Opcode::kReshape);
  EXPECT_EQ(opcode_of("shared"), hlo::Opcode::kBitcast);  // m is also a result
  EXPECT_EQ(opcode_of("into_dot"), hlo::Opcode::kBitcast);
  EXPECT_EQ(opcode_of("of_param"), hlo::Opcode::kBitcast);
}

}  // namespace
}  // namespace kiln::passes
