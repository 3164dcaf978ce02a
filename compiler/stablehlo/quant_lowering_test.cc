// Quantized types lowered to integer and float arithmetic
// (quant_lowering.h); the numbers are checked end to end by the quantized
// corpus (tests/stablehlo_corpus_run_test.cc).
#include "compiler/stablehlo/quant_lowering.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/stablehlo/stablehlo_test_corpus.h"

namespace kiln::stablehlo {
namespace {

using testing::Contains;

std::string Converted(std::string_view mlir) { return testing::ConvertedHloText(mlir, "q.mlir"); }

TEST(QuantLoweringTest, QuantizeRoundsTheScaledValueAndClampsToStorage) {
  const std::string hlo = Converted(R"(
    func.func @main(%x: tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-100:100>:f32, 0.5:-3>> {
      %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-100:100>:f32, 0.5:-3>>
      return %q : tensor<4x!quant.uniform<i8<-100:100>:f32, 0.5:-3>>
    })");
  EXPECT_TRUE(Contains(hlo, "f32[] constant(0.5)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[4] divide(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[] constant(-3)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[] constant(-100)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[] constant(100)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[4] clamp(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "round-nearest-even(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "ROOT")) << hlo;
  EXPECT_TRUE(Contains(hlo, "s8[4] convert(")) << hlo;
}

TEST(QuantLoweringTest, OpsOnQuantizedValuesDequantizeOperateAndQuantize) {
  const std::string hlo = Converted(R"(
    func.func @main(%a: tensor<3x!quant.uniform<i4:f32, 0.25:1>>) -> tensor<3xf32> {
      %s = stablehlo.add %a, %a : (tensor<3x!quant.uniform<i4:f32, 0.25:1>>, tensor<3x!quant.uniform<i4:f32, 0.25:1>>)
          -> tensor<3x!quant.uniform<i4:f32, 0.5:0>>
      %d = stablehlo.uniform_dequantize %s : (tensor<3x!quant.uniform<i4:f32, 0.5:0>>) -> tensor<3xf32>
      return %d : tensor<3xf32>
    })");
  EXPECT_TRUE(Contains(hlo, "s4[3] parameter(0)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[3] add(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "s4[3] convert(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "s32[3] subtract(")) << hlo;
  // One dequantization of %a for both operands.
  size_t dequantized = 0;
  for (size_t at = 0; (at = hlo.find("s32[3] convert(%Arg_0", at)) != std::string::npos; ++at) ++dequantized;
  EXPECT_EQ(dequantized, 1u) << hlo;
}

TEST(QuantLoweringTest, PerAxisParametersBroadcastAlongTheirDimension) {
  const std::string hlo = Converted(R"(
    func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32:1, {0.1:1, 0.2:2, 0.4:3}>>) -> tensor<2x3xf32> {
      %d = stablehlo.uniform_dequantize %a : (tensor<2x3x!quant.uniform<i8:f32:1, {0.1:1, 0.2:2, 0.4:3}>>) -> tensor<2x3xf32>
      return %d : tensor<2x3xf32>
    })");
  EXPECT_TRUE(Contains(hlo, "f32[3] concatenate(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "s32[3] concatenate(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[2,3] broadcast(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "dimensions={1}")) << hlo;
}

TEST(QuantLoweringTest, ReducersOfQuantizedValuesComputeOnExpressedValues) {
  const std::string hlo = Converted(R"(
    func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<!quant.uniform<i8:f32, 0.5:0>> {
      %z = stablehlo.constant() <{value = dense<0> : tensor<i8>}> : () -> tensor<!quant.uniform<i8:f32, 0.5:0>>
      %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0]
          : (tensor<4x!quant.uniform<i8:f32, 0.5:0>>, tensor<!quant.uniform<i8:f32, 0.5:0>>) -> tensor<!quant.uniform<i8:f32, 0.5:0>>
      return %r : tensor<!quant.uniform<i8:f32, 0.5:0>>
    })");
  EXPECT_TRUE(Contains(hlo, "s8[] constant(0)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[] add(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[] reduce(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "s8[] convert(")) << hlo;
}

}  // namespace
}  // namespace kiln::stablehlo
