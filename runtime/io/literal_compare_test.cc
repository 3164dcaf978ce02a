#include "runtime/io/literal_compare.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::io {
namespace {

hlo::Literal ParseTestLiteral(const char* text) {
  auto lit = hlo::ParseLiteral(text);
  EXPECT_TRUE(lit) << text << ": " << lit.error().message;
  return *lit;
}

std::string Mismatch(const char* expected, const char* actual, CompareOptions options = {}) {
  Status status = CompareLiterals(ParseTestLiteral(expected), ParseTestLiteral(actual), options);
  return status ? "" : status.error().message;
}

TEST(LiteralCompareTest, IntegersArePredsAreExact) {
  EXPECT_EQ(Mismatch("s32[3] {1, 2, 3}", "s32[3] {1, 2, 3}"), "");
  EXPECT_EQ(Mismatch("s32[2,2] {{1, 2}, {3, 4}}", "s32[2,2] {{1, 2}, {3, 5}}"),
            "index [1,1]: expected 4, got 5 (not equal); 1 of 4 elements differ");
  EXPECT_NE(Mismatch("pred[2] {true, false}", "pred[2] {true, true}"), "");
  EXPECT_NE(Mismatch("s64[1] {9007199254740993}", "s64[1] {9007199254740992}"), "");
}

TEST(LiteralCompareTest, FloatsUseTheDefaultTolerance) {
  EXPECT_EQ(Mismatch("f32[2] {1, 100}", "f32[2] {1.000001, 100.005}"), "");
  std::string message = Mismatch("f32[2] {1, 2}", "f32[2] {1, 2.1}");
  EXPECT_NE(message.find("index [1]: expected 2, got 2.1"), std::string::npos) << message;
  // Errors and tolerances print with 6 significant digits.
  EXPECT_NE(message.find("(abs error 0.0999999 > "), std::string::npos) << message;
  // bf16 is looser than f32.
  EXPECT_EQ(Mismatch("bf16[1] {1}", "bf16[1] {1.0078125}"), "");
  EXPECT_NE(Mismatch("f32[1] {1}", "f32[1] {1.0078125}"), "");
}

TEST(LiteralCompareTest, ErrorSpecOverridesAndEqualModeIsExact) {
  CompareOptions loose{.mode = CompareMode::kNear, .tolerance = Tolerance{0.5, 0}};
  EXPECT_EQ(Mismatch("f32[1] {1}", "f32[1] {1.4}", loose), "");
  CompareOptions exact{.mode = CompareMode::kEqual};
  EXPECT_NE(Mismatch("f32[1] {1}", "f32[1] {1.000001}", exact), "");
  EXPECT_EQ(Mismatch("f32[1] {1}", "f32[1] {1}", exact), "");
}

TEST(LiteralCompareTest, NanAndInfinity) {
  EXPECT_EQ(Mismatch("f32[2] {nan, inf}", "f32[2] {nan, inf}"), "");
  EXPECT_NE(Mismatch("f32[1] {nan}", "f32[1] {1}"), "");
  EXPECT_NE(Mismatch("f32[1] {inf}", "f32[1] {-inf}"), "");
  CompareOptions huge{.tolerance = Tolerance{1e300, 1e300}};
  EXPECT_NE(Mismatch("f32[1] {inf}", "f32[1] {3e38}", huge), "");
}

TEST(LiteralCompareTest, ComplexComparesBothParts) {
  EXPECT_EQ(Mismatch("c64[1] {(1, 2)}", "c64[1] {(1, 2.000001)}"), "");
  EXPECT_NE(Mismatch("c64[1] {(1, 2)}", "c64[1] {(1, 3)}"), "");
}

TEST(LiteralCompareTest, ShapesAndTuples) {
  EXPECT_NE(Mismatch("f32[2] {1, 2}", "f32[1,2] {{1, 2}}").find("shape mismatch"),
            std::string::npos);
  EXPECT_NE(Mismatch("f32[2] {1, 2}", "s32[2] {1, 2}").find("shape mismatch"), std::string::npos);
  EXPECT_EQ(Mismatch("(f32[] 1, (s32[] 2))", "(f32[] 1, (s32[] 2))"), "");
  std::string message = Mismatch("(f32[] 1, (s32[] 2))", "(f32[] 1, (s32[] 3))");
  EXPECT_TRUE(message.starts_with("at {1,0} index []: expected 2, got 3")) << message;
}

TEST(LiteralCompareTest, CountsAllMismatches) {
  std::string message = Mismatch("s32[4] {1, 2, 3, 4}", "s32[4] {0, 2, 0, 0}");
  EXPECT_NE(message.find("3 of 4 elements differ"), std::string::npos) << message;
}

}  // namespace
}  // namespace kiln::runtime::io
