#include "compiler/stablehlo/convert.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/frontend.h"
#include "compiler/stablehlo/stablehlo_test_corpus.h"

namespace kiln::stablehlo {
namespace {

using testing::Contains;

std::string ConvertToText(std::string_view mlir) { return testing::ConvertedHloText(mlir); }

TEST(ConvertTest, DotGeneralIsDot) {
  std::string hlo = ConvertToText(R"(
    func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
          precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      return %0 : tensor<2x3x5xf32>
    })");
  EXPECT_TRUE(Contains(hlo, "f32[2,3,5] dot(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                            "rhs_contracting_dims={1}, operand_precision={default,highest}"))
      << hlo;
}

TEST(ConvertTest, BroadcastInDimDropsExpandingUnitDimensions) {
  std::string hlo = ConvertToText(R"(
    func.func @main(%a: tensor<1x3xf32>) -> tensor<4x2x3xf32> {
      %0 = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<4x2x3xf32>
      return %0 : tensor<4x2x3xf32>
    })");
  EXPECT_TRUE(Contains(hlo, "f32[3] reshape(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[4,2,3] broadcast(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "dimensions={2}")) << hlo;
}

TEST(ConvertTest, WhileCarriesCapturedValuesInItsState) {
  std::string hlo = ConvertToText(R"(
    func.func @main(%n: tensor<i64>, %step: tensor<i64>) -> tensor<i64> {
      %c = stablehlo.constant dense<0> : tensor<i64>
      %r = stablehlo.while(%i = %c) : tensor<i64>
        cond {
          %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %next = stablehlo.add %i, %step : tensor<i64>
          stablehlo.return %next : tensor<i64>
        }
      return %r : tensor<i64>
    })");
  EXPECT_TRUE(Contains(hlo, "(s64[], s64[], s64[]) while(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "condition=")) << hlo;
}

TEST(ConvertTest, CaseBranchesTakeTheirCaptures) {
  std::string hlo = ConvertToText(R"(
    func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
      %r = "stablehlo.case"(%i) ({
        %n = stablehlo.negate %x : tensor<2xf32>
        stablehlo.return %n : tensor<2xf32>
      }, {
        stablehlo.return %x : tensor<2xf32>
      }) : (tensor<i32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })");
  EXPECT_TRUE(Contains(hlo, "f32[2] conditional(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "branch_computations={")) << hlo;
}

TEST(ConvertTest, CallsAndModuleAttributes) {
  std::string hlo = ConvertToText(R"(
    module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
      func.func public @main(%a: tensor<2xf32> {mhlo.sharding = "{devices=[2]0,1}", tf.aliasing_output = 0 : i32})
          -> (tensor<2xf32> {mhlo.sharding = "{replicated}"}) {
        %0:2 = func.call @two(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
        %1 = stablehlo.add %0#0, %0#1 : tensor<2xf32>
        return %1 : tensor<2xf32>
      }
      func.func private @two(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
        return %x, %x : tensor<2xf32>, tensor<2xf32>
      }
    })");
  EXPECT_TRUE(Contains(hlo, "HloModule jit_f")) << hlo;
  EXPECT_TRUE(Contains(hlo, "num_partitions=2")) << hlo;
  EXPECT_TRUE(Contains(hlo, "input_output_alias={{}:(0,{},may-alias)}")) << hlo;
  EXPECT_TRUE(Contains(hlo, "sharding={devices=[2]0,1}")) << hlo;
  EXPECT_TRUE(Contains(hlo, "(f32[2], f32[2]) call(")) << hlo;
}

TEST(ConvertTest, ChecksBecomeSideEffectingCustomCalls) {
  std::string hlo = ConvertToText(R"(
    func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      stablehlo.custom_call @check.expect_close(%a, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
      "check.expect_almost_eq_const"(%a) <{value = dense<1.0> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
      return %a : tensor<2xf32>
    })");
  EXPECT_TRUE(Contains(hlo, "custom_call_target=\"check.expect_close\", custom_call_has_side_effect=true, "
                            "backend_config=\"min_ulp=0 max_ulp=3\""))
      << hlo;
  EXPECT_TRUE(Contains(hlo, "custom_call_target=\"check.expect_almost_eq\"")) << hlo;
  EXPECT_TRUE(Contains(hlo, "backend_config=\"tolerance=1e-04\"")) << hlo;
}

TEST(ConvertTest, ModuleOfTestFunctionsHasOneEntryCallingThemAll) {
  std::string hlo = ConvertToText(R"(
    func.func @a(%x: tensor<f32>) -> tensor<f32> { return %x : tensor<f32> }
    func.func @b(%x: tensor<i32>, %y: tensor<i32>) -> tensor<i32> {
      %0 = stablehlo.add %x, %y : tensor<i32>
      return %0 : tensor<i32>
    }
    func.func private @unused() -> tensor<i32> {
      %0 = stablehlo.constant dense<1> : tensor<i32>
      return %0 : tensor<i32>
    })");
  EXPECT_TRUE(Contains(hlo, "ENTRY %main")) << hlo;
  EXPECT_TRUE(Contains(hlo, "s32[] parameter(2)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "ROOT %tuple")) << hlo;
  EXPECT_FALSE(Contains(hlo, "unused")) << hlo;
}

TEST(ConvertTest, ChloDecomposesIntoHloOps) {
  std::string hlo = ConvertToText(R"(
    func.func @main(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
      %0 = chlo.lgamma %x : tensor<4xbf16> -> tensor<4xbf16>
      %1 = chlo.erf_inv %x : tensor<4xbf16> -> tensor<4xbf16>
      return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
    })");
  EXPECT_TRUE(Contains(hlo, "f32[4] convert(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "log-plus-one(")) << hlo;
  EXPECT_FALSE(Contains(hlo, "custom-call")) << hlo;
}

TEST(ConvertTest, ErrorsNameTheOp) {
  auto module = ParseAnyModule(R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.frobnicate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})",
                               "u.mlir");
  ASSERT_FALSE(module);
  EXPECT_EQ(module.error().code, ErrorCode::kUnimplemented);
  EXPECT_NE(module.error().ToString().find("u.mlir:3:8: stablehlo.frobnicate: op is not supported"),
            std::string::npos)
      << module.error();
}

TEST(ConvertTest, ShapeAssertionsHoldingAddNothingAndFailingOnesRefuse) {
  constexpr std::string_view kProgram = R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<CONDITION> : tensor<i1>
  %d = stablehlo.constant dense<4> : tensor<i32>
  stablehlo.custom_call @shape_assertion(%c, %d) {error_message = "dim {0} is wrong", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<4xf32>
})";
  std::string holding(kProgram), failing(kProgram);
  holding.replace(holding.find("CONDITION"), 9, "true");
  failing.replace(failing.find("CONDITION"), 9, "false");
  std::string hlo = ConvertToText(holding);
  EXPECT_FALSE(Contains(hlo, "custom-call")) << hlo;
  auto module = ParseAnyModule(failing, "a.mlir");
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().ToString().find("a.mlir:5:3"), std::string::npos) << module.error();
  EXPECT_NE(module.error().ToString().find("shape assertion fails: dim {0} is wrong"), std::string::npos)
      << module.error();
}

TEST(ConvertTest, HloTextPassesThrough) {
  EXPECT_EQ(DetectModuleFormat("HloModule m\nENTRY e { ROOT c = f32[] constant(1) }"), ModuleFormat::kHloText);
  EXPECT_EQ(DetectModuleFormat(std::string_view("ML\xefR\x0d", 5)), ModuleFormat::kMlirBytecode);
  EXPECT_EQ(DetectModuleFormat("module {}"), ModuleFormat::kMlirText);
  auto module = ParseAnyModule("HloModule m\nENTRY e { ROOT c = f32[] constant(1) }", "m.hlo");
  ASSERT_TRUE(module) << module.error();
  EXPECT_EQ((*module)->name(), "m");
}

}  // namespace
}  // namespace kiln::stablehlo
