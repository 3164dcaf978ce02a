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

TEST(OpClassTest, ADepthwiseConvolutionIsVectorWorkOfItsOwn) {
  // One input feature per group, with a channel multiplier of 1 or 2.
  EXPECT_EQ(ConvolutionClass("f32[3,3,1,64]", "f32[2,8,8,64]", 64), OpClass::kOpaque);
  EXPECT_EQ(ConvolutionClass("f32[3,3,1,128]", "f32[2,8,8,128]", 64), OpClass::kOpaque);
}

TEST(OpClassTest, DenseAndGroupedConvolutionsAreContractions) {
  EXPECT_EQ(ConvolutionClass("f32[3,3,64,32]", "f32[2,8,8,32]", 1), OpClass::kContraction);
  // Two input features per group: a grouped GEMM, still on the MXU.
  EXPECT_EQ(ConvolutionClass("f32[3,3,2,64]", "f32[2,8,8,64]", 32), OpClass::kContraction);
}

}  // namespace
}  // namespace kiln::hlo
