// Data movement: broadcast, reshape, transpose, bitcast with layouts, slice,
// dynamic-(update-)slice clamping, concatenate, pad, iota, reverse,
// bitcast-convert, zero-size shapes.
#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;
using testing::RunToText;

TEST(ShapeOpsTest, Broadcast) {
  EXPECT_EQ(RunToText(OneOp("s32[2] x", "s32[2,3]", "broadcast(x), dimensions={0}"),
                      {Lit("s32[2] {1, 2}")}),
            "s32[2,3] {{1, 1, 1}, {2, 2, 2}}");
  EXPECT_EQ(RunToText(OneOp("s32[3] x", "s32[2,3]", "broadcast(x), dimensions={1}"),
                      {Lit("s32[3] {1, 2, 3}")}),
            "s32[2,3] {{1, 2, 3}, {1, 2, 3}}");
}

TEST(ShapeOpsTest, ReshapeAndTranspose) {
  EXPECT_EQ(RunToText(OneOp("s32[2,3] x", "s32[3,2]", "reshape(x)"),
                      {Lit("s32[2,3] {{1, 2, 3}, {4, 5, 6}}")}),
            "s32[3,2] {{1, 2}, {3, 4}, {5, 6}}");
  EXPECT_EQ(RunToText(OneOp("s32[2,3] x", "s32[3,2]", "transpose(x), dimensions={1,0}"),
                      {Lit("s32[2,3] {{1, 2, 3}, {4, 5, 6}}")}),
            "s32[3,2] {{1, 4}, {2, 5}, {3, 6}}");
}

TEST(ShapeOpsTest, BitcastRespectsLayouts) {
  // f32[2,3]{0,1} is stored column-major: physical order 1,4,2,5,3,6.
  EXPECT_EQ(RunToText(OneOp("s32[2,3]{0,1} x", "s32[6]{0}", "bitcast(x)"),
                      {Lit("s32[2,3] {{1, 2, 3}, {4, 5, 6}}")}),
            "s32[6] {1, 4, 2, 5, 3, 6}");
  // Default layouts: a plain reshape of row-major data.
  EXPECT_EQ(RunToText(OneOp("s32[2,3] x", "s32[3,2]", "bitcast(x)"),
                      {Lit("s32[2,3] {{1, 2, 3}, {4, 5, 6}}")}),
            "s32[3,2] {{1, 2}, {3, 4}, {5, 6}}");
}

TEST(ShapeOpsTest, SliceWithStrides) {
  EXPECT_EQ(RunToText(OneOp("s32[2,5] x", "s32[2,2]", "slice(x), slice={[0:2], [1:5:2]}"),
                      {Lit("s32[2,5] {{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}")}),
            "s32[2,2] {{1, 3}, {6, 8}}");
}

TEST(ShapeOpsTest, DynamicSliceClampsStartIndices) {
  const std::string hlo = OneOp("s32[5] x, s32[] i", "s32[2]",
                                "dynamic-slice(x, i), dynamic_slice_sizes={2}");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[5] {0, 1, 2, 3, 4}"), Lit("s32[] 1")}), "s32[2] {1, 2}");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[5] {0, 1, 2, 3, 4}"), Lit("s32[] 9")}), "s32[2] {3, 4}");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[5] {0, 1, 2, 3, 4}"), Lit("s32[] -4")}), "s32[2] {0, 1}");
}

TEST(ShapeOpsTest, DynamicSliceTakesAVectorOfStartIndices) {
  const std::string hlo = OneOp("s32[2,3] x, s32[2] i", "s32[1,2]",
                                "dynamic-slice(x, i), dynamic_slice_sizes={1,2}");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[2,3] {{0, 1, 2}, {3, 4, 5}}"), Lit("s32[2] {1, 1}")}),
            "s32[1,2] {{4, 5}}");
}

TEST(ShapeOpsTest, DynamicUpdateSliceClampsStartIndices) {
  const std::string hlo = OneOp("s32[2,3] x, s32[1,2] u, s32[] i, s32[] j", "s32[2,3]",
                                "dynamic-update-slice(x, u, i, j)");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[2,3] {{0, 0, 0}, {0, 0, 0}}"), Lit("s32[1,2] {{7, 8}}"),
                            Lit("s32[] 5"), Lit("s32[] 5")}),
            "s32[2,3] {{0, 0, 0}, {0, 7, 8}}");
}

TEST(ShapeOpsTest, Concatenate) {
  EXPECT_EQ(RunToText(OneOp("s32[2,1] x, s32[2,2] y", "s32[2,3]",
                            "concatenate(x, y), dimensions={1}"),
                      {Lit("s32[2,1] {{1}, {4}}"), Lit("s32[2,2] {{2, 3}, {5, 6}}")}),
            "s32[2,3] {{1, 2, 3}, {4, 5, 6}}");
}

TEST(ShapeOpsTest, PadWithNegativeAndInteriorPadding) {
  EXPECT_EQ(RunToText(OneOp("s32[3] x, s32[] v", "s32[7]", "pad(x, v), padding=1_1_1"),
                      {Lit("s32[3] {1, 2, 3}"), Lit("s32[] 0")}),
            "s32[7] {0, 1, 0, 2, 0, 3, 0}");
  EXPECT_EQ(RunToText(OneOp("s32[4] x, s32[] v", "s32[3]", "pad(x, v), padding=-2_1"),
                      {Lit("s32[4] {1, 2, 3, 4}"), Lit("s32[] 9")}),
            "s32[3] {3, 4, 9}");
  EXPECT_EQ(RunToText(OneOp("s32[3] x, s32[] v", "s32[3]", "pad(x, v), padding=-1_-1_1"),
                      {Lit("s32[3] {1, 2, 3}"), Lit("s32[] 0")}),
            "s32[3] {0, 2, 0}");
}

TEST(ShapeOpsTest, IotaAndReverse) {
  EXPECT_EQ(RunToText(OneOp("", "s32[2,3]", "iota(), iota_dimension=1")),
            "s32[2,3] {{0, 1, 2}, {0, 1, 2}}");
  EXPECT_EQ(RunToText(OneOp("", "f32[3]", "iota(), iota_dimension=0")), "f32[3] {0, 1, 2}");
  EXPECT_EQ(RunToText(OneOp("s32[2,2] x", "s32[2,2]", "reverse(x), dimensions={0,1}"),
                      {Lit("s32[2,2] {{1, 2}, {3, 4}}")}),
            "s32[2,2] {{4, 3}, {2, 1}}");
}

TEST(ShapeOpsTest, BitcastConvertBetweenWidths) {
  EXPECT_EQ(RunToText(OneOp("f32[1] x", "u8[1,4]", "bitcast-convert(x)"), {Lit("f32[1] {1}")}),
            "u8[1,4] {{0, 0, 128, 63}}");
  EXPECT_EQ(RunToText(OneOp("f32[2] x", "s32[2]", "bitcast-convert(x)"), {Lit("f32[2] {1, -0.0}")}),
            "s32[2] {1065353216, -2147483648}");
}

TEST(ShapeOpsTest, ZeroSizeShapes) {
  EXPECT_EQ(RunToText(OneOp("s32[0,3] x", "s32[3,0]", "transpose(x), dimensions={1,0}"),
                      {Lit("s32[0,3] {}")}),
            "s32[3,0] {{}, {}, {}}");
  EXPECT_EQ(RunToText(OneOp("s32[0] x, s32[] v", "s32[2]", "pad(x, v), padding=1_1"),
                      {Lit("s32[0] {}"), Lit("s32[] 5")}),
            "s32[2] {5, 5}");
}

}  // namespace
}  // namespace kiln::runtime
