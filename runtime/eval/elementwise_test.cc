// Elementwise unary and binary ops: XLA's integer rules, NaN and -0
// handling, bf16 rounding, sub-byte wrapping, regions of several ops.
#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;
using testing::RunToText;

std::string Binary(std::string_view type, std::string_view op, std::string_view a,
                   std::string_view b) {
  std::string t(type);
  return RunToText(OneOp(t + " x, " + t + " y", t, std::string(op) + "(x, y)"),
                   {Lit(t + " " + std::string(a)), Lit(t + " " + std::string(b))});
}

std::string Unary(std::string_view type, std::string_view result, std::string_view op,
                  std::string_view a) {
  std::string t(type);
  return RunToText(OneOp(t + " x", result, std::string(op) + "(x)"), {Lit(t + " " + std::string(a))});
}

TEST(ElementwiseTest, SignedDivisionFollowsXla) {
  EXPECT_EQ(Binary("s32[4]", "divide", "{7, -7, 5, -2147483648}", "{2, 2, 0, -1}"),
            "s32[4] {3, -3, -1, -2147483648}");
  EXPECT_EQ(Binary("s32[4]", "remainder", "{7, -7, 5, -2147483648}", "{2, 2, 0, -1}"),
            "s32[4] {1, -1, 5, 0}");
  EXPECT_EQ(Binary("s8[2]", "divide", "{-128, 9}", "{-1, 0}"), "s8[2] {-128, -1}");
}

TEST(ElementwiseTest, UnsignedDivisionByZeroIsAllOnes) {
  EXPECT_EQ(Binary("u32[2]", "divide", "{7, 9}", "{0, 2}"), "u32[2] {4294967295, 4}");
  EXPECT_EQ(Binary("u8[2]", "remainder", "{7, 9}", "{0, 2}"), "u8[2] {7, 1}");
}

TEST(ElementwiseTest, IntegerArithmeticWraps) {
  EXPECT_EQ(Binary("s32[2]", "add", "{2147483647, -2147483648}", "{1, -1}"),
            "s32[2] {-2147483648, 2147483647}");
  EXPECT_EQ(Binary("u16[1]", "multiply", "{65535}", "{65535}"), "u16[1] {1}");
  EXPECT_EQ(Unary("s32[1]", "s32[1]", "negate", "{-2147483648}"), "s32[1] {-2147483648}");
  EXPECT_EQ(Unary("s32[1]", "s32[1]", "abs", "{-2147483648}"), "s32[1] {-2147483648}");
}

TEST(ElementwiseTest, ShiftsPastTheWidth) {
  EXPECT_EQ(Binary("s32[4]", "shift-left", "{1, 1, 1, 1}", "{3, 31, 32, -1}"),
            "s32[4] {8, -2147483648, 0, 0}");
  EXPECT_EQ(Binary("s32[3]", "shift-right-arithmetic", "{-8, -8, 8}", "{1, 40, 40}"),
            "s32[3] {-4, -1, 0}");
  EXPECT_EQ(Binary("s32[2]", "shift-right-logical", "{-8, -8}", "{28, 32}"), "s32[2] {15, 0}");
  EXPECT_EQ(Binary("u8[2]", "shift-right-logical", "{255, 255}", "{7, 8}"), "u8[2] {1, 0}");
}

TEST(ElementwiseTest, SubByteTypesWrapToTheirWidth) {
  EXPECT_EQ(Binary("s4[2]", "add", "{7, -8}", "{1, -1}"), "s4[2] {-8, 7}");
  EXPECT_EQ(Binary("u4[2]", "add", "{15, 3}", "{1, 4}"), "u4[2] {0, 7}");
  EXPECT_EQ(Binary("s4[1]", "shift-right-logical", "{-1}", "{1}"), "s4[1] {7}");
  EXPECT_EQ(Unary("u4[2]", "u4[2]", "count-leading-zeros", "{1, 0}"), "u4[2] {3, 4}");
  EXPECT_EQ(Unary("s4[1]", "s4[1]", "popcnt", "{-1}"), "s4[1] {4}");
}

TEST(ElementwiseTest, MaxMinPropagateNanAndOrderZeros) {
  EXPECT_EQ(Binary("f32[4]", "maximum", "{nan, 1, -0.0, 2}", "{1, nan, 0, 3}"),
            "f32[4] {nan, nan, 0, 3}");
  EXPECT_EQ(Binary("f32[3]", "minimum", "{nan, 0, 2}", "{1, -0.0, 3}"), "f32[3] {nan, -0.0, 2}");
  EXPECT_EQ(Binary("s32[2]", "maximum", "{-5, 4}", "{3, -9}"), "s32[2] {3, 4}");
}

TEST(ElementwiseTest, IntegerPower) {
  EXPECT_EQ(Binary("s32[5]", "power", "{2, -3, 1, 5, 0}", "{10, 3, -4, -1, 0}"),
            "s32[5] {1024, -27, 1, 0, 1}");
  EXPECT_EQ(Binary("f32[2]", "power", "{2, 4}", "{-1, 0.5}"), "f32[2] {0.5, 2}");
}

TEST(ElementwiseTest, Rounding) {
  EXPECT_EQ(Unary("f32[4]", "f32[4]", "round-nearest-afz", "{0.5, 1.5, -2.5, 2.4}"),
            "f32[4] {1, 2, -3, 2}");
  EXPECT_EQ(Unary("f32[4]", "f32[4]", "round-nearest-even", "{0.5, 1.5, -2.5, 2.6}"),
            "f32[4] {0, 2, -2, 3}");
  EXPECT_EQ(Unary("f32[2]", "f32[2]", "floor", "{-1.5, 1.5}"), "f32[2] {-2, 1}");
  EXPECT_EQ(Unary("f32[2]", "f32[2]", "ceil", "{-1.5, 1.5}"), "f32[2] {-1, 2}");
}

TEST(ElementwiseTest, SignKeepsNanAndSignedZero) {
  EXPECT_EQ(Unary("f32[5]", "f32[5]", "sign", "{-3, 0, -0.0, nan, 7}"),
            "f32[5] {-1, 0, -0.0, nan, 1}");
  EXPECT_EQ(Unary("s32[3]", "s32[3]", "sign", "{-3, 0, 9}"), "s32[3] {-1, 0, 1}");
}

TEST(ElementwiseTest, Transcendentals) {
  EXPECT_EQ(Unary("f32[2]", "f32[2]", "logistic", "{0, -1000}"), "f32[2] {0.5, 0}");
  EXPECT_EQ(Unary("f32[2]", "f32[2]", "cbrt", "{27, -8}"), "f32[2] {3, -2}");
  EXPECT_EQ(Unary("f64[1]", "f64[1]", "exponential-minus-one", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Unary("f64[1]", "f64[1]", "log-plus-one", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Unary("f32[1]", "f32[1]", "erf", "{0}"), "f32[1] {0}");
  EXPECT_EQ(Binary("f32[2]", "atan2", "{0, 1}", "{1, 0}"), "f32[2] {0, 1.5707964}");
  EXPECT_EQ(Unary("f32[1]", "f32[1]", "rsqrt", "{4}"), "f32[1] {0.5}");
}

TEST(ElementwiseTest, IsFiniteAndLogicalOps) {
  EXPECT_EQ(Unary("f32[4]", "pred[4]", "is-finite", "{1, inf, -inf, nan}"),
            "pred[4] {true, false, false, false}");
  EXPECT_EQ(Unary("pred[2]", "pred[2]", "not", "{true, false}"), "pred[2] {false, true}");
  EXPECT_EQ(Unary("s8[1]", "s8[1]", "not", "{5}"), "s8[1] {-6}");
  EXPECT_EQ(Binary("u8[1]", "xor", "{12}", "{10}"), "u8[1] {6}");
  EXPECT_EQ(Binary("pred[2]", "and", "{true, true}", "{true, false}"), "pred[2] {true, false}");
}

TEST(ElementwiseTest, Bf16IsRoundedToNearestEvenAfterEachOp) {
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1).
  EXPECT_EQ(Binary("bf16[2]", "add", "{1, 1}", "{0.00390625, 0.01171875}"),
            "bf16[2] {1, 1.015625}");
  EXPECT_EQ(Binary("f16[1]", "multiply", "{300}", "{300}"), "f16[1] {inf}");
}

TEST(ElementwiseTest, ComplexOps) {
  std::string hlo = OneOp("f32[2] re, f32[2] im", "f32[2]",
                          "abs(c64[2] complex(re, im))");
  EXPECT_EQ(RunToText(hlo, {Lit("f32[2] {3, 0}"), Lit("f32[2] {4, -2}")}), "f32[2] {5, 2}");
  EXPECT_EQ(Binary("c64[1]", "multiply", "{(1, 2)}", "{(3, 4)}"), "c64[1] {(-5, 10)}");
  EXPECT_EQ(Unary("c64[1]", "f32[1]", "imag", "{(1, 2)}"), "f32[1] {2}");
}

TEST(ElementwiseTest, ScalarsAndEmptyShapes) {
  EXPECT_EQ(Binary("f32[]", "add", "1.5", "2"), "f32[] 3.5");
  EXPECT_EQ(Binary("f32[0]", "add", "{}", "{}"), "f32[0] {}");
  EXPECT_EQ(Binary("s32[2,0]", "multiply", "{{}, {}}", "{{}, {}}"), "s32[2,0] {{}, {}}");
}

TEST(ElementwiseTest, ChainsShareARegionAndKeepIntermediatesCorrect) {
  // Intermediates used twice, a broadcast scalar, a select on a compare, and
  // a value read both inside and outside the chain.
  const char* hlo = R"(
HloModule chain
ENTRY e {
  x = f32[3000] parameter(0)
  y = f32[3000] parameter(1)
  two = f32[] constant(2)
  b = f32[3000] broadcast(two), dimensions={}
  s = f32[3000] add(x, y)
  m = f32[3000] multiply(s, b)
  d = f32[3000] subtract(m, s)
  c = pred[3000] compare(d, x), direction=GT
  sel = f32[3000] select(c, d, x)
  n = f32[3000] negate(sel)
  ROOT t = (f32[3000], f32[3000]) tuple(n, s)
})";
  hlo::Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {3000}));
  hlo::Literal y(hlo::Shape(hlo::PrimitiveType::kF32, {3000}));
  for (int i = 0; i < 3000; ++i) {
    x.Set<float>(i, static_cast<float>(i % 7) - 3);
    y.Set<float>(i, static_cast<float>(i % 5) - 2);
  }
  Result<hlo::Literal> result = testing::Run(hlo, {x, y});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  const hlo::Literal& n = result->tuple_elements()[0];
  const hlo::Literal& s = result->tuple_elements()[1];
  for (int i = 0; i < 3000; ++i) {
    float sum = x.Get<float>(i) + y.Get<float>(i);
    float d = sum * 2 - sum;
    float expected = -(d > x.Get<float>(i) ? d : x.Get<float>(i));
    ASSERT_EQ(n.Get<float>(i), expected) << i;
    ASSERT_EQ(s.Get<float>(i), sum) << i;
  }
}

TEST(ElementwiseTest, UndefinedOpOnTypeIsAnError) {
  std::string text = Unary("s32[1]", "s32[1]", "sqrt", "{4}");
  EXPECT_NE(text.find("sqrt is not defined on s32"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln::runtime
