// Mixed precision in data movement: the verifier (allow_mixed_precision, as
// XLA's) accepts copy, broadcast, transpose, slice, ... whose result has
// another floating-point type than the operand. The moved values are the
// operand's converted; moving bf16 bytes as f32 elements read past the end
// of the operand and returned garbage that changed between runs.
//
// Every value below is exact in bf16, so the results compare exactly.
#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "fuzz/regression_inputs.h"
#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;
using testing::RunToText;

// A bf16 operand large enough that reading it as f32 walks far past its end.
constexpr char kWide[] = "bf16[2,4] {{1, -2, 3.5, 0.25}, {-0.5, 6, 7, 8}}";

TEST(MixedPrecisionTest, TheVerifierAcceptsThem) {
  // So kiln run and the server evaluate them.
  auto module = hlo::ParseModule(OneOp("bf16[2,4] x", "f32[4,2]", "transpose(x), dimensions={1,0}"));
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_TRUE(hlo::VerifyModule(**module));
}

TEST(MixedPrecisionTest, CopyConverts) {
  EXPECT_EQ(RunToText(OneOp("bf16[2,4] x", "f32[2,4]", "copy(x)"), {Lit(kWide)}),
            "f32[2,4] {{1, -2, 3.5, 0.25}, {-0.5, 6, 7, 8}}");
  EXPECT_EQ(RunToText(OneOp("f32[3] x", "bf16[3]", "copy(x)"), {Lit("f32[3] {1.5, -3, 256}")}),
            "bf16[3] {1.5, -3, 256}");
}

TEST(MixedPrecisionTest, CopyInsideAnElementwiseRegionConverts) {
  // The copy feeds an add in the same region, where an unconverted copy
  // would be read in place at the wrong width.
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = bf16[2,4] parameter(0)
  c = f32[2,4] copy(x)
  ROOT r = f32[2,4] add(c, c)
})";
  EXPECT_EQ(RunToText(hlo, {Lit(kWide)}), "f32[2,4] {{2, -4, 7, 0.5}, {-1, 12, 14, 16}}");
}

TEST(MixedPrecisionTest, BroadcastConverts) {
  EXPECT_EQ(RunToText(OneOp("bf16[] x", "f32[3]", "broadcast(x), dimensions={}"),
                      {Lit("bf16[] 2.5")}),
            "f32[3] {2.5, 2.5, 2.5}");
  EXPECT_EQ(RunToText(OneOp("bf16[2] x", "f32[2,3]", "broadcast(x), dimensions={0}"),
                      {Lit("bf16[2] {1, -2}")}),
            "f32[2,3] {{1, 1, 1}, {-2, -2, -2}}");
}

TEST(MixedPrecisionTest, ReshapeTransposeReverseConvert) {
  EXPECT_EQ(RunToText(OneOp("bf16[2,4] x", "f32[4,2]", "reshape(x)"), {Lit(kWide)}),
            "f32[4,2] {{1, -2}, {3.5, 0.25}, {-0.5, 6}, {7, 8}}");
  // Same width, other type: the bits must not be reinterpreted.
  EXPECT_EQ(RunToText(OneOp("bf16[2] x", "f16[2]", "reshape(x)"), {Lit("bf16[2] {1, -2}")}),
            "f16[2] {1, -2}");
  EXPECT_EQ(RunToText(OneOp("bf16[2,4] x", "f32[4,2]", "transpose(x), dimensions={1,0}"),
                      {Lit(kWide)}),
            "f32[4,2] {{1, -0.5}, {-2, 6}, {3.5, 7}, {0.25, 8}}");
  EXPECT_EQ(RunToText(OneOp("bf16[2,4] x", "f32[2,4]", "reverse(x), dimensions={1}"),
                      {Lit(kWide)}),
            "f32[2,4] {{0.25, 3.5, -2, 1}, {8, 7, 6, -0.5}}");
}

TEST(MixedPrecisionTest, SlicesConvert) {
  EXPECT_EQ(RunToText(OneOp("bf16[2,4] x", "f32[2,2]", "slice(x), slice={[0:2], [2:4]}"),
                      {Lit(kWide)}),
            "f32[2,2] {{3.5, 0.25}, {7, 8}}");
  EXPECT_EQ(RunToText(OneOp("bf16[2,4] x, s32[] i, s32[] j", "f32[1,3]",
                            "dynamic-slice(x, i, j), dynamic_slice_sizes={1,3}"),
                      {Lit(kWide), Lit("s32[] 1"), Lit("s32[] 1")}),
            "f32[1,3] {{6, 7, 8}}");
}

TEST(MixedPrecisionTest, MultiOperandMovesConvertEachOperand) {
  EXPECT_EQ(RunToText(OneOp("bf16[2] x, f32[3] y", "f32[5]", "concatenate(x, y), dimensions={0}"),
                      {Lit("bf16[2] {1, -2}"), Lit("f32[3] {3, 4, 5}")}),
            "f32[5] {1, -2, 3, 4, 5}");
  EXPECT_EQ(RunToText(OneOp("bf16[2] x, bf16[] v", "f32[5]", "pad(x, v), padding=1_1_1"),
                      {Lit("bf16[2] {1, -2}"), Lit("bf16[] 0.5")}),
            "f32[5] {0.5, 1, 0.5, -2, 0.5}");
  EXPECT_EQ(RunToText(OneOp("bf16[4] x, bf16[2] u, s32[] i", "f32[4]",
                            "dynamic-update-slice(x, u, i)"),
                      {Lit("bf16[4] {1, 2, 3, 4}"), Lit("bf16[2] {-1, -2}"), Lit("s32[] 1")}),
            "f32[4] {1, -1, -2, 4}");
}

TEST(MixedPrecisionTest, NarrowingMovesConvert) {
  // f32 into bf16: moving f32-wide elements would write past the result.
  EXPECT_EQ(RunToText(OneOp("f32[2,2] x", "bf16[2,2]", "transpose(x), dimensions={1,0}"),
                      {Lit("f32[2,2] {{1, 2}, {3, 4}}")}),
            "bf16[2,2] {{1, 3}, {2, 4}}");
  EXPECT_EQ(RunToText(OneOp("f32[2,3] x, s32[] n", "bf16[<=6]", "dynamic-reshape(x, n)"),
                      {Lit("f32[2,3] {{1, 2, 3}, {4, 5, 6}}"), Lit("s32[] 4")}),
            "bf16[4] {1, 2, 3, 4}");
}

// Found by fuzz/hlo_compile_fuzzer (kept as fuzz/regressions/hlo_compile/
// mixed_precision_add): elementwise arithmetic on operands of two float
// types verifies, but the loops read every operand as the first one's type
// (an f16 operand read as f32: a heap overflow) and write the result as
// that type (f32 math into a bf16 result: an overflowing write). Until
// they convert, the evaluator refuses them with a clear error.
TEST(MixedPrecisionTest, ElementwiseArithmeticOnMixedTypesIsRefused) {
  auto module = hlo::ParseModule(fuzz::RegressionInput("hlo_compile", "mixed_precision_add"));
  ASSERT_TRUE(module) << module.error().message;
  ASSERT_TRUE(hlo::VerifyModule(**module));
  std::vector<hlo::Literal> args = {Lit("f32[4] {1, 2, 3, 4}"), Lit("f16[4] {1, 2, 3, 4}")};
  auto result = EvaluateModule(**module, args);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "instruction %sum: add of f32 and f16 operands (mixed precision) is not supported by the evaluator; "
            "convert the operands to one type first");

  struct Case {
    const char* params;
    const char* result;
    const char* op;
    std::vector<hlo::Literal> args;
    const char* refusal;
  };
  Case cases[] = {
      {"f32[2] x, f32[2] y", "bf16[2]", "multiply(x, y)", {Lit("f32[2] {1, 2}"), Lit("f32[2] {3, 4}")},
       "multiply of f32 operands with a bf16 result (mixed precision) is not supported by the evaluator; "
       "convert the result"},
      {"pred[2] p, f32[2] x, bf16[2] y", "f32[2]", "select(p, x, y)",
       {Lit("pred[2] {1, 0}"), Lit("f32[2] {1, 2}"), Lit("bf16[2] {3, 4}")},
       "select of f32 and bf16 operands (mixed precision) is not supported by the evaluator; convert the "
       "operands to one type first"},
      {"bf16[2] x, f32[2] y", "pred[2]", "compare(x, y), direction=LT", {Lit("bf16[2] {1, 2}"), Lit("f32[2] {3, 4}")},
       "compare of bf16 and f32 operands (mixed precision) is not supported by the evaluator; convert the "
       "operands to one type first"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RunToText(OneOp(c.params, c.result, c.op), c.args), std::string("error: instruction %r: ") + c.refusal);
  }
}

TEST(MixedPrecisionTest, ElementwiseOpsWithTheirOwnResultTypesStillRun) {
  EXPECT_EQ(RunToText(OneOp("f32[2] x, f32[2] y", "pred[2]", "compare(x, y), direction=LT"),
                      {Lit("f32[2] {1, 5}"), Lit("f32[2] {3, 4}")}),
            "pred[2] {true, false}");
  EXPECT_EQ(RunToText(OneOp("c64[2] x", "f32[2]", "abs(x)"), {Lit("c64[2] {(3, 4), (0, -2)}")}),
            "f32[2] {5, 2}");
  EXPECT_EQ(RunToText(OneOp("f32[2] x, f32[2] y", "c64[2]", "complex(x, y)"),
                      {Lit("f32[2] {1, 2}"), Lit("f32[2] {3, 4}")}),
            "c64[2] {(1, 3), (2, 4)}");
  EXPECT_EQ(RunToText(OneOp("pred[2] p, bf16[2] x, bf16[2] y", "bf16[2]", "select(p, x, y)"),
                      {Lit("pred[2] {1, 0}"), Lit("bf16[2] {1, 2}"), Lit("bf16[2] {3, 4}")}),
            "bf16[2] {1, 4}");
}

}  // namespace
}  // namespace kiln::runtime
