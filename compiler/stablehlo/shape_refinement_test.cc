#include "compiler/stablehlo/shape_refinement.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/frontend.h"
#include "compiler/stablehlo/shape_folding.h"
#include "compiler/stablehlo/stablehlo_test_corpus.h"

namespace kiln::stablehlo {
namespace {

hlo::Shape S(std::string_view text) {
  Result<hlo::Shape> s = hlo::ParseShape(text);
  EXPECT_TRUE(s.has_value()) << text;
  return s ? *s : hlo::Shape();
}

// The module refined for `shapes` and `values`, verified and printed; or
// "error: ...".
std::string Refined(std::string_view text, std::vector<hlo::Shape> shapes,
                    std::vector<std::optional<int64_t>> values = {}) {
  auto module = ParseAnyModule(text, "t.mlir");
  if (!module) return "parse error: " + module.error().ToString();
  EXPECT_TRUE(hlo::VerifyModule(**module).has_value());
  EXPECT_TRUE(NeedsRefinement(**module));
  Status refined = RefineShapes(**module, {std::move(shapes), std::move(values)});
  if (!refined) return "error: " + refined.error().ToString();
  Status verified = hlo::VerifyModule(**module);
  if (!verified) return "verify: " + verified.error().ToString();
  EXPECT_FALSE(FirstDynamicDimension(**module).has_value()) << hlo::PrintModule(**module);
  return hlo::PrintModule(**module);
}

using testing::Contains;

// JAX's export of `x + 1` for x: f32[b, 4], with b as a dimension argument.
constexpr const char* kBroadcastAdd = R"(
  func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %b = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
    %four = stablehlo.constant dense<4> : tensor<1xi32>
    %shape = stablehlo.concatenate %b1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %ones = stablehlo.dynamic_broadcast_in_dim %one, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
    %sum = stablehlo.add %arg1, %ones : tensor<?x4xf32>
    return %sum : tensor<?x4xf32>
  })";

TEST(ShapeRefinementTest, ShapesFlowFromArgumentsThroughShapeComputations) {
  const std::string hlo = Refined(kBroadcastAdd, {S("s64[]"), S("f32[3,4]")});
  EXPECT_TRUE(Contains(hlo, "f32[3,4] parameter(1)")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[3,4] broadcast(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "ROOT")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[3,4] add(")) << hlo;
  EXPECT_FALSE(Contains(hlo, "custom-call")) << hlo;
  EXPECT_FALSE(Contains(hlo, "get-dimension-size")) << hlo;
}

TEST(ShapeRefinementTest, DynamicModulesAreFingerprintedAsTheyAre) {
  auto module = ParseAnyModule(kBroadcastAdd, "t.mlir");
  ASSERT_TRUE(module);
  const std::optional<std::string> dynamic = FirstDynamicDimension(**module);
  ASSERT_TRUE(dynamic.has_value());
  EXPECT_TRUE(Contains(*dynamic, "parameter 1")) << *dynamic;
  EXPECT_TRUE(Contains(*dynamic, "dimension 0 of f32[?,4]")) << *dynamic;
}

// jnp.arange(2 * b) for the dimension variable b.
constexpr const char* kArange = R"(
  func.func public @main(%arg0: tensor<i64>) -> tensor<?xi32> {
    %two = stablehlo.constant dense<2> : tensor<i64>
    %n = stablehlo.multiply %arg0, %two : tensor<i64>
    %n32 = stablehlo.convert %n : (tensor<i64>) -> tensor<i32>
    %shape = stablehlo.reshape %n32 : (tensor<i32>) -> tensor<1xi32>
    %r = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
    return %r : tensor<?xi32>
  })";

TEST(ShapeRefinementTest, DimensionArgumentsGiveShapes) {
  const std::string hlo = Refined(kArange, {}, {5});
  EXPECT_TRUE(Contains(hlo, "s32[10] iota(), iota_dimension=0")) << hlo;
}

TEST(ShapeRefinementTest, AnUnknownDimensionArgumentIsNamed) {
  const std::string text = Refined(kArange, {}, {});
  EXPECT_TRUE(Contains(text, "error: ")) << text;
  EXPECT_TRUE(Contains(text, "stablehlo.dynamic_iota")) << text;
  EXPECT_TRUE(Contains(text, "output_shape")) << text;
  EXPECT_TRUE(Contains(text, "not known before running")) << text;
}

TEST(ShapeRefinementTest, ArgumentShapesMustKeepStaticSizes) {
  const std::string text = Refined(kBroadcastAdd, {S("s64[]"), S("f32[3,5]")});
  EXPECT_TRUE(Contains(text, "error: ")) << text;
  EXPECT_TRUE(Contains(text, "parameter 1")) << text;
  EXPECT_TRUE(Contains(text, "f32[3,5]")) << text;
}

// x[i : i + b] of x: f32[b, 4], i a runtime value: the limit is the start
// plus b, so the slice has b rows wherever it starts.
constexpr const char* kRuntimeStart = R"(
  func.func public @main(%arg0: tensor<i64>, %x: tensor<?x4xf32>, %i: tensor<i32>) -> tensor<?x4xf32> {
    %b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %i1 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
    %z = stablehlo.constant dense<0> : tensor<1xi32>
    %start = stablehlo.concatenate %i1, %z, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %again = stablehlo.concatenate %i1, %z, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
    %four = stablehlo.constant dense<4> : tensor<1xi32>
    %size = stablehlo.concatenate %b1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %limit = stablehlo.add %again, %size : tensor<2xi32>
    %ones = stablehlo.constant dense<1> : tensor<2xi32>
    %r = stablehlo.real_dynamic_slice %x, %start, %limit, %ones
        : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  })";

TEST(ShapeRefinementTest, SlicesFromRuntimeStartsBecomeDynamicSlices) {
  const std::string hlo = Refined(kRuntimeStart, {S("s64[]"), S("f32[6,4]"), S("s32[]")}, {6});
  EXPECT_TRUE(Contains(hlo, "f32[6,4] dynamic-slice(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "dynamic_slice_sizes={6,4}")) << hlo;
}

TEST(ShapeRefinementTest, CalleesAndLoopsAreRefinedWithTheirOperands) {
  const std::string hlo = Refined(R"(
    func.func public @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      %r = call @double(%x) : (tensor<?xf32>) -> tensor<?xf32>
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %w:2 = stablehlo.while(%i = %zero, %v = %r) : tensor<i32>, tensor<?xf32>
        cond {
          %three = stablehlo.constant dense<3> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %next = stablehlo.add %i, %one : tensor<i32>
          %v2 = stablehlo.multiply %v, %v : tensor<?xf32>
          stablehlo.return %next, %v2 : tensor<i32>, tensor<?xf32>
        }
      return %w#1 : tensor<?xf32>
    }
    func.func private @double(%y: tensor<?xf32>) -> tensor<?xf32> {
      %d = stablehlo.add %y, %y : tensor<?xf32>
      return %d : tensor<?xf32>
    })",
                                  {S("f32[7]")});
  EXPECT_TRUE(Contains(hlo, "f32[7] add(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "f32[7] multiply(")) << hlo;
  EXPECT_TRUE(Contains(hlo, "(s32[], f32[7]) while(")) << hlo;
}

TEST(ShapeRefinementTest, HloTextWithDynamicDimensionsIsRefinedToo) {
  auto module = ParseAnyModule(R"(
HloModule m
ENTRY e {
  x = f32[?,3] parameter(0)
  ROOT n = f32[?,3] negate(x)
})",
                               "m.hlo", ConvertOptions{.argument_shapes = {S("f32[2,3]")}});
  ASSERT_TRUE(module) << module.error().ToString();
  EXPECT_TRUE(Contains(hlo::PrintModule(**module), "f32[2,3] negate(")) << hlo::PrintModule(**module);
}

hlo::Literal Lit(std::string_view text) {
  Result<hlo::Literal> l = hlo::ParseLiteral(text);
  EXPECT_TRUE(l.has_value()) << text;
  return l ? std::move(*l) : hlo::Literal();
}

TEST(ShapeFoldingTest, IntegersWrapToTheirWidthAndDivisionByZeroIsUnknown) {
  auto module = hlo::ParseModule(R"(
HloModule m
ENTRY e {
  a = s8[2] constant({100, -7})
  b = s8[2] constant({100, 0})
  sum = s8[2] add(a, b)
  quotient = s8[2] divide(a, b)
  ROOT t = (s8[2], s8[2]) tuple(sum, quotient)
})");
  ASSERT_TRUE(module);
  const hlo::Computation& e = *(*module)->entry();
  std::optional<IntTensor> a = IntTensorOf(*e.instructions()[0]->literal());
  std::optional<IntTensor> b = IntTensorOf(*e.instructions()[1]->literal());
  ASSERT_TRUE(a && b);
  const IntTensor* operands[] = {&*a, &*b};
  std::optional<IntTensor> sum = FoldInstruction(*e.instructions()[2], operands);
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->values, (std::vector<int64_t>{-56, -7}));
  EXPECT_EQ(LiteralOf(*sum), Lit("s8[2] {-56, -7}"));
  EXPECT_FALSE(FoldInstruction(*e.instructions()[3], operands).has_value());
}

}  // namespace
}  // namespace kiln::stablehlo
