// Dynamic dimensions: set-dimension-size / get-dimension-size, sizes that
// follow a value through elementwise ops, dynamic-reshape, and results cut
// to their actual sizes.
#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::RunToText;

TEST(DynamicShapesTest, GetDimensionSizeSeesTheSizeThroughAnElementwiseOp) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  size = s32[] parameter(0)
  data = s32[4] parameter(1)
  dynamic = s32[<=4] set-dimension-size(data, size), dimensions={0}
  sum = s32[<=4] add(dynamic, data)
  ROOT n = s32[] get-dimension-size(sum), dimensions={0}
})";
  EXPECT_EQ(RunToText(hlo, {Lit("s32[] 3"), Lit("s32[4] {1, 2, 3, 4}")}), "s32[] 3");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[] 0"), Lit("s32[4] {1, 2, 3, 4}")}), "s32[] 0");
}

// A kernel of an executable receives a dynamic array cut to its actual
// size; it is padded back to the bound and keeps its sizes.
TEST(DynamicShapesTest, SmallerArgumentForADynamicParameterKeepsItsSizes) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = s32[<=3,<=4] parameter(0)
  doubled = s32[<=3,<=4] add(x, x)
  n = s32[] get-dimension-size(doubled), dimensions={1}
  ROOT t = (s32[<=3,<=4], s32[]) tuple(doubled, n)
})";
  EXPECT_EQ(RunToText(hlo, {Lit("s32[2,2] {{1, 2}, {3, 4}}")}),
            "(s32[2,2] {{2, 4}, {6, 8}}, s32[] 2)");
}

TEST(DynamicShapesTest, StaticDimensionSizeIsTheBound) {
  EXPECT_EQ(
      RunToText(testing::OneOp("f32[2,5] x", "s32[]", "get-dimension-size(x), dimensions={1}"),
                {Lit("f32[2,5] {{1,2,3,4,5},{6,7,8,9,10}}")}),
      "s32[] 5");
}

TEST(DynamicShapesTest, ResultIsCutToItsActualSize) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  n = s32[] parameter(1)
  d = f32[2,<=3] set-dimension-size(x, n), dimensions={1}
  ROOT y = f32[2,<=3] negate(d)
})";
  EXPECT_EQ(RunToText(hlo, {Lit("f32[2,3] {{1,2,3},{4,5,6}}"), Lit("s32[] 2")}),
            "f32[2,2] {{-1, -2}, {-4, -5}}");
}

TEST(DynamicShapesTest, DynamicReshapeUsesTheValidElements) {
  // Valid region [2,3,3] of a [3,4,4] array, read row-major as [3,6].
  const char* hlo = R"(
HloModule m
ENTRY e {
  p = s32[3,4,4] parameter(0)
  two = s32[] parameter(1)
  three = s32[] parameter(2)
  six = s32[] parameter(3)
  a = s32[<=3,4,4] set-dimension-size(p, two), dimensions={0}
  b = s32[<=3,<=4,4] set-dimension-size(a, three), dimensions={1}
  c = s32[<=3,<=4,<=4] set-dimension-size(b, three), dimensions={2}
  ROOT r = s32[<=6,<=8] dynamic-reshape(c, three, six)
})";
  hlo::Literal p =
      Lit("s32[3,4,4] {{{0,1,2,3},{4,5,6,7},{8,9,10,11},{12,13,14,15}},"
          "{{16,17,18,19},{20,21,22,23},{24,25,26,27},{28,29,30,31}},"
          "{{32,33,34,35},{36,37,38,39},{40,41,42,43},{44,45,46,47}}}");
  EXPECT_EQ(RunToText(hlo, {p, Lit("s32[] 2"), Lit("s32[] 3"), Lit("s32[] 6")}),
            "s32[3,6] {{0, 1, 2, 4, 5, 6}, {8, 9, 10, 16, 17, 18}, {20, 21, 22, 24, 25, 26}}");
}

TEST(DynamicShapesTest, DynamicReshapeKeepsTheLeadingElementsWhenCountsDiffer) {
  // 12 valid elements read as 9, as XLA's dynamic padder does.
  const char* hlo = R"(
HloModule m
ENTRY e {
  p = s32[2,3,3] parameter(0)
  two = s32[] parameter(1)
  nine = s32[] parameter(2)
  d = s32[2,<=3,3] set-dimension-size(p, two), dimensions={1}
  ROOT r = s32[<=18] dynamic-reshape(d, nine)
})";
  hlo::Literal p = Lit("s32[2,3,3] {{{0,1,2},{3,4,5},{6,7,8}},{{9,10,11},{12,13,14},{15,16,17}}}");
  EXPECT_EQ(RunToText(hlo, {p, Lit("s32[] 2"), Lit("s32[] 9")}),
            "s32[9] {0, 1, 2, 3, 4, 5, 9, 10, 11}");
}

TEST(DynamicShapesTest, SizeOutsideTheBoundFailsClearly) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[<=4] set-dimension-size(x, n), dimensions={0}
})";
  EXPECT_EQ(RunToText(hlo, {Lit("f32[4] {1, 2, 3, 4}"), Lit("s32[] 5")}),
            "error: instruction %d: size 5 of dimension 0 is outside [0, 4]");
  EXPECT_EQ(RunToText(hlo, {Lit("f32[4] {1, 2, 3, 4}"), Lit("s32[] -1")}),
            "error: instruction %d: size -1 of dimension 0 is outside [0, 4]");
}

}  // namespace
}  // namespace kiln::runtime
