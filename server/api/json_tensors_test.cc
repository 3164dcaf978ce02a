#include "server/api/json_tensors.h"

#include <gtest/gtest.h>

#include <cmath>

#include "server/http/error_status.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using hlo::PrimitiveType;

TEST(JsonTensorsTest, RoundTripsFloatsWithSpecialValues) {
  hlo::Shape shape(PrimitiveType::kF32, {2, 2});
  json value = {{"shape", {2, 2}}, {"dtype", "f32"}, {"data", {1.5, "nan", "-inf", -2}}};
  Result<hlo::Literal> literal = LiteralFromJson(value, shape, "0");
  ASSERT_TRUE(literal) << literal.error().message;
  EXPECT_EQ(literal->Get<float>(0), 1.5f);
  EXPECT_TRUE(std::isnan(literal->Get<float>(1)));
  Result<json> back = LiteralToJson(*literal);
  ASSERT_TRUE(back);
  EXPECT_EQ((*back)["data"], json({1.5, "nan", "-inf", -2.0}));
  EXPECT_EQ((*back)["shape"], json({2, 2}));
}

TEST(JsonTensorsTest, Bf16RoundsToNearestEven) {
  hlo::Shape shape(PrimitiveType::kBF16, {1});
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even gives 1.
  Result<hlo::Literal> literal =
      LiteralFromJson({{"shape", {1}}, {"dtype", "bf16"}, {"data", {1.00390625}}}, shape, "0");
  ASSERT_TRUE(literal);
  EXPECT_EQ(literal->Get<uint16_t>(0), 0x3f80);
}

TEST(JsonTensorsTest, MismatchesAre422AndMalformedValues400) {
  hlo::Shape shape(PrimitiveType::kS8, {2});
  auto wrong_shape = LiteralFromJson({{"shape", {3}}, {"dtype", "s8"}, {"data", {1, 2, 3}}}, shape, "2");
  ASSERT_FALSE(wrong_shape);
  EXPECT_EQ(http::HttpStatusOf(wrong_shape.error()), 422);
  EXPECT_EQ(wrong_shape.error().details().parameter, "2");
  EXPECT_EQ(wrong_shape.error().details().got, "s8[3]");
  auto out_of_range = LiteralFromJson({{"shape", {2}}, {"dtype", "s8"}, {"data", {1, 300}}}, shape, "0");
  ASSERT_FALSE(out_of_range);
  EXPECT_EQ(http::HttpStatusOf(out_of_range.error()), 422);
  auto not_numbers = LiteralFromJson({{"shape", {2}}, {"dtype", "s8"}, {"data", {1, "x"}}}, shape, "0");
  ASSERT_FALSE(not_numbers);
  EXPECT_EQ(not_numbers.error().ReasonOrCodeName(), "invalid_inputs");
  auto extra = LiteralFromJson({{"shape", {2}}, {"dtype", "s8"}, {"data", {1, 2}}, {"name", "x"}}, shape, "0");
  ASSERT_FALSE(extra);
  EXPECT_EQ(http::HttpStatusOf(extra.error()), 400);
}

TEST(JsonTensorsTest, Tuples) {
  hlo::Shape shape = hlo::Shape::Tuple({hlo::Shape(PrimitiveType::kPred, {}), hlo::Shape(PrimitiveType::kU32, {1})});
  json value = {{"tuple", {{{"shape", json::array()}, {"dtype", "pred"}, {"data", {true}}},
                           {{"shape", {1}}, {"dtype", "u32"}, {"data", {4000000000u}}}}}};
  Result<hlo::Literal> literal = LiteralFromJson(value, shape, "0");
  ASSERT_TRUE(literal) << literal.error().message;
  Result<json> back = LiteralToJson(*literal);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, value);
}

}  // namespace
}  // namespace kiln::api
