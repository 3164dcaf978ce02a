#include "compiler/hlo/op_class.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

// The class of the root of a module whose entry convolves x (NHWC) with k.
OpClass ConvolutionClass(const std::string& kernel, const std::string& out, int groups) {
  auto module = ParseModule("HloModule m\nENTRY e {\n  x = f32[2,8,8,64] parameter(0)\n  k = " + kernel +
                                " parameter(1)\n  ROOT c = " + out +
                                " convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                                "feature_group_count=" + std::to_string(groups) + "\n}\n",
                            "test.hlo");
  EXPECT_TRUE(module.has_value()) << (module ? "" : module.error().ToString());
  return module ? ClassOf(*(*module)->entry()->root()) : OpClass::kFree;
}

TEST(OpClassTest, ADepthwiseConvolutionIsWindowWorkOnTheVectorUnit) {
  // One input feature per group, with a channel multiplier of 1 or 2.
  EXPECT_EQ(ConvolutionClass("f32[3,3,1,64]", "f32[2,8,8,64]", 64), OpClass::kWindow);
  EXPECT_EQ(ConvolutionClass("f32[3,3,1,128]", "f32[2,8,8,128]", 64), OpClass::kWindow);
}

TEST(OpClassTest, AReduceWindowIsWindowWorkAndAVariadicOneIsOpaque) {
  auto module = ParseModule(
      "HloModule m\nmax { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b) }\n"
      "max2 { a = f32[] parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n d = s32[] "
      "parameter(3)\n"
      " m = f32[] maximum(a, c)\n n = s32[] maximum(b, d)\n ROOT t = (f32[], s32[]) tuple(m, n) }\n"
      "ENTRY e {\n x = f32[2,8,8,4] parameter(0)\n i = s32[2,8,8,4] parameter(1)\n z = f32[] constant(0)\n"
      " y = s32[] constant(0)\n"
      " p = f32[2,4,4,4] reduce-window(x, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n"
      " v = (f32[2,4,4,4], s32[2,4,4,4]) reduce-window(x, i, z, y), window={size=1x2x2x1 stride=1x2x2x1}, "
      "to_apply=max2\n"
      " ROOT t = (f32[2,4,4,4], (f32[2,4,4,4], s32[2,4,4,4])) tuple(p, v)\n}\n",
      "test.hlo");
  ASSERT_TRUE(module.has_value()) << module.error().ToString();
  const Instruction* root = (*module)->entry()->root();
  EXPECT_EQ(ClassOf(*root->operand(0)), OpClass::kWindow);
  EXPECT_TRUE(IsWindowOp(*root->operand(0)));
  EXPECT_EQ(ClassOf(*root->operand(1)), OpClass::kOpaque);
  EXPECT_FALSE(IsWindowOp(*root->operand(1)));
}

// A depthwise convolution's weight gradient (batch_group_count, one output
// feature per group) is vector work too; a batch-grouped convolution with
// several features per group stays a grouped GEMM.
TEST(OpClassTest, ADepthwiseWeightGradientIsWindowWork) {
  auto module = ParseModule(
      "HloModule m\nENTRY e {\n x = f32[8,64,14,14] parameter(0)\n g = f32[8,64,14,14] parameter(1)\n"
      " h = f32[8,128,14,14] parameter(2)\n"
      " wg = f32[1,64,3,3] convolution(x, g), window={size=14x14 pad=1_1x1_1}, dim_labels=fb01_io01->bf01, "
      "batch_group_count=64\n"
      " dense = f32[1,128,3,3] convolution(x, h), window={size=14x14 pad=1_1x1_1}, "
      "dim_labels=fb01_io01->bf01, "
      "batch_group_count=64\n"
      " ROOT t = (f32[1,64,3,3], f32[1,128,3,3]) tuple(wg, dense)\n}\n",
      "test.hlo");
  ASSERT_TRUE(module.has_value()) << module.error().ToString();
  const Instruction* root = (*module)->entry()->root();
  EXPECT_TRUE(IsDepthwiseFilterGradient(*root->operand(0)));
  EXPECT_EQ(ClassOf(*root->operand(0)), OpClass::kWindow);
  EXPECT_FALSE(IsDepthwiseFilterGradient(*root->operand(1)));
  EXPECT_EQ(ClassOf(*root->operand(1)), OpClass::kContraction);
}

TEST(OpClassTest, DenseAndGroupedConvolutionsAreContractions) {
  EXPECT_EQ(ConvolutionClass("f32[3,3,64,32]", "f32[2,8,8,32]", 1), OpClass::kContraction);
  // Two input features per group: a grouped GEMM, still on the MXU.
  EXPECT_EQ(ConvolutionClass("f32[3,3,2,64]", "f32[2,8,8,64]", 32), OpClass::kContraction);
}

}  // namespace
}  // namespace kiln::hlo
