// compare (directions, total order), select, clamp, convert (saturation,
// NaN, pred, f8, complex) and reduce-precision.
#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;
using testing::RunToText;

std::string Compare(std::string_view type, std::string_view dir, std::string_view a,
                    std::string_view b, std::string_view extra = "") {
  std::string t(type);
  std::string n = t.substr(t.find('['));
  return RunToText(OneOp(t + " x, " + t + " y", "pred" + n,
                         "compare(x, y), direction=" + std::string(dir) + std::string(extra)),
                   {Lit(t + " " + std::string(a)), Lit(t + " " + std::string(b))});
}

TEST(CompareConvertTest, CompareDirections) {
  const char* a = "{1, 2, 3}";
  const char* b = "{2, 2, 2}";
  EXPECT_EQ(Compare("s32[3]", "EQ", a, b), "pred[3] {false, true, false}");
  EXPECT_EQ(Compare("s32[3]", "NE", a, b), "pred[3] {true, false, true}");
  EXPECT_EQ(Compare("s32[3]", "LT", a, b), "pred[3] {true, false, false}");
  EXPECT_EQ(Compare("s32[3]", "LE", a, b), "pred[3] {true, true, false}");
  EXPECT_EQ(Compare("s32[3]", "GT", a, b), "pred[3] {false, false, true}");
  EXPECT_EQ(Compare("s32[3]", "GE", a, b), "pred[3] {false, true, true}");
  EXPECT_EQ(Compare("u32[1]", "LT", "{4294967295}", "{1}"), "pred[1] {false}");
}

TEST(CompareConvertTest, FloatCompareIsUnorderedOnNan) {
  EXPECT_EQ(Compare("f32[2]", "EQ", "{nan, 0}", "{nan, -0.0}"), "pred[2] {false, true}");
  EXPECT_EQ(Compare("f32[1]", "NE", "{nan}", "{nan}"), "pred[1] {true}");
}

TEST(CompareConvertTest, TotalOrderSeparatesZerosAndOrdersNan) {
  EXPECT_EQ(Compare("f32[3]", "LT", "{-0.0, 1, inf}", "{0, nan, nan}", ", type=TOTALORDER"),
            "pred[3] {true, true, true}");
  EXPECT_EQ(Compare("f32[2]", "EQ", "{-0.0, nan}", "{0, nan}", ", type=TOTALORDER"),
            "pred[2] {false, true}");
  EXPECT_EQ(Compare("bf16[2]", "LT", "{-nan, -inf}", "{-inf, -1}", ", type=TOTALORDER"),
            "pred[2] {true, true}");
}

TEST(CompareConvertTest, SelectAndClamp) {
  EXPECT_EQ(RunToText(OneOp("pred[3] p, s32[3] a, s32[3] b", "s32[3]", "select(p, a, b)"),
                      {Lit("pred[3] {true, false, true}"), Lit("s32[3] {1, 2, 3}"),
                       Lit("s32[3] {4, 5, 6}")}),
            "s32[3] {1, 5, 3}");
  EXPECT_EQ(RunToText(OneOp("s32[] lo, s32[4] x, s32[] hi", "s32[4]", "clamp(lo, x, hi)"),
                      {Lit("s32[] 0"), Lit("s32[4] {-5, 3, 9, 10}"), Lit("s32[] 9")}),
            "s32[4] {0, 3, 9, 9}");
}

std::string Convert(std::string_view from, std::string_view to, std::string_view value) {
  std::string f(from);
  return RunToText(OneOp(f + " x", to, "convert(x)"), {Lit(f + " " + std::string(value))});
}

TEST(CompareConvertTest, FloatToIntSaturatesAndNanIsZero) {
  EXPECT_EQ(Convert("f32[5]", "s8[5]", "{300, -300, nan, -1.9, 1.9}"),
            "s8[5] {127, -128, 0, -1, 1}");
  EXPECT_EQ(Convert("f32[3]", "u8[3]", "{-5, 256, 3.5}"), "u8[3] {0, 255, 3}");
  EXPECT_EQ(Convert("f64[2]", "s64[2]", "{1e300, -1e300}"),
            "s64[2] {9223372036854775807, -9223372036854775808}");
  EXPECT_EQ(Convert("f32[2]", "s4[2]", "{100, -100}"), "s4[2] {7, -8}");
}

TEST(CompareConvertTest, ConvertPredIntFloatComplex) {
  EXPECT_EQ(Convert("f32[3]", "pred[3]", "{0, -0.0, 0.5}"), "pred[3] {false, false, true}");
  EXPECT_EQ(Convert("pred[2]", "f32[2]", "{true, false}"), "f32[2] {1, 0}");
  EXPECT_EQ(Convert("s32[2]", "s8[2]", "{257, -129}"), "s8[2] {1, 127}");
  EXPECT_EQ(Convert("f32[1]", "c64[1]", "{2.5}"), "c64[1] {(2.5, 0)}");
  EXPECT_EQ(Convert("c64[1]", "f32[1]", "{(2.5, 7)}"), "f32[1] {2.5}");
}

TEST(CompareConvertTest, ConvertNarrowFloats) {
  EXPECT_EQ(Convert("f32[3]", "bf16[3]", "{1.00390625, 1.01171875, 3.4e38}"),
            "bf16[3] {1, 1.015625, inf}");
  EXPECT_EQ(Convert("f32[2]", "f8e4m3fn[2]", "{1.0625, 1000}"), "f8e4m3fn[2] {1, nan}");
  EXPECT_EQ(Convert("f8e5m2[2]", "f32[2]", "{1.5, -inf}"), "f32[2] {1.5, -inf}");
  EXPECT_EQ(Convert("f8e4m3fn[1]", "bf16[1]", "{448}"), "bf16[1] {448}");
}

TEST(CompareConvertTest, ReducePrecision) {
  const std::string hlo = OneOp("f32[5] x", "f32[5]",
                                "reduce-precision(x), exponent_bits=5, mantissa_bits=10");
  // f16's range: 1e5 overflows to inf, 1e-8 underflows to 0, 1+2^-11 rounds
  // to even (1), NaN stays NaN.
  EXPECT_EQ(RunToText(hlo, {Lit("f32[5] {1e5, -1e-8, 1.00048828125, nan, 3}")}),
            "f32[5] {inf, -0.0, 1, nan, 3}");
}

}  // namespace
}  // namespace kiln::runtime
