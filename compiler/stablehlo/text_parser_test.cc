#include "compiler/stablehlo/text_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/stablehlo/attr_printer.h"
#include "compiler/stablehlo/mlir_types_text.h"

namespace kiln::stablehlo {
namespace {

const Function& OnlyFunction(const MlirModule& m) { return *m.functions.at(0); }

// The ops of the first function's body, as "name {attrs} : result types".
std::vector<std::string> OpSummaries(const MlirModule& m) {
  std::vector<std::string> out;
  for (const Operation* op : OnlyFunction(m).body.blocks.at(0)->ops) {
    std::string s(op->name);
    s += " " + SortedAttrsText(m.types(), op->attrs);
    for (ValueId r : op->results) s += " " + m.types().ToString(m.value_type(r));
    out.push_back(s);
  }
  return out;
}

TEST(TextParserTest, PrettyAndGenericFormsReadAlike) {
  auto pretty = ParseMlirText(R"(
    func.func @f(%a: tensor<2x3xf32>, %p: tensor<2x3xi1>) -> tensor<3x2xf32> {
      %0 = stablehlo.add %a, %a : tensor<2x3xf32>
      %1 = stablehlo.compare GT, %0, %a, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
      %2 = stablehlo.select %1, %0, %a : tensor<2x3xi1>, tensor<2x3xf32>
      %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %3 : tensor<3x2xf32>
    })");
  auto generic = ParseMlirText(R"(
    func.func @f(%x: tensor<2x3xf32>, %q: tensor<2x3xi1>) -> tensor<3x2xf32> {
      %s = "stablehlo.add"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %c = "stablehlo.compare"(%s, %x) {compare_type = #stablehlo<comparison_type FLOAT>,
          comparison_direction = #stablehlo<comparison_direction GT>}
          : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
      %t = "stablehlo.select"(%c, %s, %x) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %r = "stablehlo.transpose"(%t) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
      "func.return"(%r) : (tensor<3x2xf32>) -> ()
    })");
  ASSERT_TRUE(pretty) << pretty.error();
  ASSERT_TRUE(generic) << generic.error();
  std::vector<std::string> a = OpSummaries(*pretty);
  std::vector<std::string> b = OpSummaries(*generic);
  ASSERT_EQ(a.size(), 5u);
  for (size_t i = 0; i + 1 < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
  EXPECT_EQ(a[3], "stablehlo.transpose {permutation = array<i64: 1, 0>} tensor<3x2xf32>");
}

TEST(TextParserTest, ReadsTypesDenseConstantsAndArrays) {
  auto m = ParseMlirText(R"(
    module @m attributes {mhlo.num_partitions = 2 : i32} {
      func.func public @main() -> (tensor<2xf32>, tensor<2xbf16>, tensor<3xi4>, tensor<2xcomplex<f32>>) {
        %0 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
        %1 = stablehlo.constant dense<1.5> : tensor<2xbf16>
        %2 = stablehlo.constant dense<[-8, 7, -1]> : tensor<3xi4>
        %3 = stablehlo.constant dense<[(1.0, 2.0), (0x7FC00000, -1.0)]> : tensor<2xcomplex<f32>>
        return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xbf16>, tensor<3xi4>, tensor<2xcomplex<f32>>
      }
    })");
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->name, "m");
  ASSERT_NE(m->FindModuleAttr("mhlo.num_partitions"), nullptr);
  EXPECT_EQ(m->FindModuleAttr("mhlo.num_partitions")->i, 2);
  const auto& ops = OnlyFunction(*m).body.blocks.at(0)->ops;
  const Attr* hex = ops[0]->FindAttr("value");
  ASSERT_EQ(hex->kind, Attr::Kind::kDense);
  EXPECT_FALSE(hex->splat);
  EXPECT_EQ(hex->literal->Get<float>(0), 1.0f);
  EXPECT_EQ(hex->literal->Get<float>(1), 2.0f);
  const Attr* splat = ops[1]->FindAttr("value");
  EXPECT_TRUE(splat->splat);
  EXPECT_EQ(splat->literal->Get<uint16_t>(0), 0x3FC0);  // 1.5 in bf16
  const Attr* ints = ops[2]->FindAttr("value");
  EXPECT_EQ(ints->literal->Get<int8_t>(0), -8);
  EXPECT_EQ(ints->literal->Get<int8_t>(2), -1);
  const Attr* complex = ops[3]->FindAttr("value");
  EXPECT_EQ(complex->literal->Get<float>(1), 2.0f);
  EXPECT_TRUE(std::isnan(complex->literal->Get<float>(2)));
  EXPECT_EQ(complex->literal->Get<float>(3), -1.0f);
}

TEST(TextParserTest, IgnoresLocationsAndResolvesAliases) {
  auto m = ParseMlirText(R"(
    #loc1 = loc("f.py":3:4)
    !t = tensor<4xf32>
    func.func @f(%a: !t loc("a")) -> !t {
      %0 = stablehlo.negate %a : !t loc(#loc1)
      return %0 : !t loc(fused[#loc1, "x"])
    } loc(#loc2)
    #loc2 = loc("g.py":1:1))");
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->types().ToString(OnlyFunction(*m).arg_types[0]), "tensor<4xf32>");
}

TEST(TextParserTest, ReadsRegionOps) {
  auto m = ParseMlirText(R"(
    func.func @f(%x: tensor<4x8xf32>, %i: tensor<i64>) -> (tensor<4xf32>, tensor<i64>) {
      %c = stablehlo.constant dense<0.0> : tensor<f32>
      %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1]
          : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
      %w:2 = stablehlo.while(%iterArg = %i, %iterArg_0 = %r) : tensor<i64>, tensor<4xf32>
        cond {
          %lt = stablehlo.compare LT, %iterArg, %iterArg : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          stablehlo.return %iterArg, %iterArg_0 : tensor<i64>, tensor<4xf32>
        }
      return %w#1, %w#0 : tensor<4xf32>, tensor<i64>
    })");
  ASSERT_TRUE(m) << m.error();
  const auto& ops = OnlyFunction(*m).body.blocks.at(0)->ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[1]->regions.size(), 1u);
  EXPECT_EQ(ops[1]->regions[0].blocks[0]->ops[0]->name, "stablehlo.add");
  EXPECT_EQ(ops[2]->regions.size(), 2u);
  EXPECT_EQ(ops[2]->results.size(), 2u);
  EXPECT_EQ(ops[3]->operands[0], ops[2]->results[1]);
}

TEST(TextParserTest, ErrorsNameLineAndColumn) {
  auto m = ParseMlirText("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                         "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n"
                         "  return %0 : tensor<2xf32>\n}",
                         "bad.mlir");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().where().line, 2);
  EXPECT_EQ(m.error().where().column, 26);
  EXPECT_NE(m.error().ToString().find("bad.mlir:2:26"), std::string::npos) << m.error();
  EXPECT_NE(m.error().message.find("%b"), std::string::npos);
}

TEST(TextParserTest, RejectsMalformedInputWithoutCrashing) {
  const char* inputs[] = {
      "",
      "func.func @f(",
      "func.func @f() -> tensor<2x",
      "func.func @f() -> tensor<99999999999999999999xf32> { }",
      "func.func @f() { %0 = stablehlo.constant dense<\"0x12\"> : tensor<4xf32> return }",
      "func.func @f() { %0 = stablehlo.constant dense<[1, 2]> : tensor<3xi32> return }",
      "func.func @f() { %0:99999999999 = stablehlo.add }",
      "module { module { module {",
      "func.func @f() { \"stablehlo.add\"(((((((( }",
      "#a = #a",
      "func.func @f() -> tensor<2xf32> { %0 = stablehlo.constant dense<1.0> : tensor<?xf32> }",
  };
  for (const char* text : inputs) {
    auto m = ParseMlirText(text);
    EXPECT_FALSE(m) << text;
  }
  std::string deep = "func.func @f() -> tensor<f32> { %0 = \"x.y\"() ";
  for (int i = 0; i < 10000; ++i) deep += "({";
  EXPECT_FALSE(ParseMlirText(deep));
}

TEST(TextParserTest, LooksLikeMlirText) {
  EXPECT_TRUE(LooksLikeMlirText("// c\nmodule @x {}"));
  EXPECT_TRUE(LooksLikeMlirText("func.func @f() {}"));
  EXPECT_TRUE(LooksLikeMlirText("#loc = loc(unknown)\nmodule {}"));
  EXPECT_FALSE(LooksLikeMlirText("HloModule m\nENTRY e { ROOT c = f32[] constant(1) }"));
  EXPECT_FALSE(LooksLikeMlirText("modules"));
}

}  // namespace
}  // namespace kiln::stablehlo
