#include "runtime/io/tensor_names.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::io {
namespace {

hlo::Literal Lit(const char* text) {
  auto lit = hlo::ParseLiteral(text);
  EXPECT_TRUE(lit) << lit.error().message;
  return *lit;
}

hlo::Shape ShapeOf(const char* text) { return *hlo::ParseShape(text); }

TEST(TensorNamesTest, OutputsAreNumberedAndNestedTuplesDotted) {
  auto single = OutputTensors(Lit("f32[2] {1, 2}"));
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].name, "0");
  auto tuple = OutputTensors(Lit("(f32[] 1, (s32[] 2, pred[] true), u8[1] {3})"));
  ASSERT_EQ(tuple.size(), 4u);
  EXPECT_EQ(tuple[0].name, "0");
  EXPECT_EQ(tuple[1].name, "1.0");
  EXPECT_EQ(tuple[2].name, "1.1");
  EXPECT_EQ(tuple[3].name, "2");
  EXPECT_EQ(tuple[3].value.ToString(), "u8[1] {3}");
}

TEST(TensorNamesTest, ArgumentsFromTensorsRoundTripsOutputs) {
  std::vector<hlo::Shape> params = {ShapeOf("f32[2]{0}"), ShapeOf("(s32[], pred[])")};
  SafetensorsFile file;
  file.tensors = {
      {"0", Lit("f32[2] {1, 2}")}, {"1.0", Lit("s32[] 5")}, {"1.1", Lit("pred[] true")}};
  auto args = ArgumentsFromTensors(file, params);
  ASSERT_TRUE(args) << args.error().message;
  ASSERT_EQ(args->size(), 2u);
  EXPECT_EQ((*args)[1].ToString(), "(s32[] 5, pred[] true)");
}

TEST(TensorNamesTest, ArgumentErrorsNameParameterAndTensor) {
  std::vector<hlo::Shape> params = {ShapeOf("f32[2,3]")};
  SafetensorsFile missing;
  auto a = ArgumentsFromTensors(missing, params);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("parameter 0 needs a tensor named \"0\" (f32[2,3])"),
            std::string::npos)
      << a.error().message;

  SafetensorsFile misshapen;
  misshapen.tensors = {{"0", Lit("f32[3,2] {{1, 2}, {3, 4}, {5, 6}}")}};
  auto b = ArgumentsFromTensors(misshapen, params);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("must be f32[2,3], got f32[3,2]"), std::string::npos)
      << b.error().message;

  SafetensorsFile extra;
  extra.tensors = {{"0", hlo::Literal(ShapeOf("f32[2,3]"))}, {"7", Lit("s32[] 1")}};
  auto c = ArgumentsFromTensors(extra, params);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("\"7\" matches no parameter"), std::string::npos)
      << c.error().message;
}

TEST(TensorNamesTest, MatchArgumentsChecksCountAndShapes) {
  std::vector<hlo::Shape> params = {ShapeOf("s32[2]")};
  EXPECT_FALSE(MatchArguments({}, params));
  EXPECT_FALSE(MatchArguments({Lit("s64[2] {1, 2}")}, params));
  auto ok = MatchArguments({Lit("s32[2] {1, 2}")}, params);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ((*ok)[0].ToString(), "s32[2] {1, 2}");
}

}  // namespace
}  // namespace kiln::runtime::io
