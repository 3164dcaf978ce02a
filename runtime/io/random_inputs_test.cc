#include "runtime/io/random_inputs.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::io {
namespace {

std::unique_ptr<hlo::Module> ParseTestModule(const char* text) {
  auto module = hlo::ParseModule(text);
  EXPECT_TRUE(module) << module.error().message;
  return std::move(*module);
}

constexpr const char* kModule = R"(
HloModule m
ENTRY e {
  a = f32[64] parameter(0)
  b = s32[64] parameter(1)
  c = (pred[64], bf16[8], u8[3]) parameter(2)
  ROOT r = f32[64] add(a, a)
}
)";

TEST(RandomInputsTest, DeterministicPerSeed) {
  auto module = ParseTestModule(kModule);
  auto first = RandomArguments(*module, 7);
  auto again = RandomArguments(*module, 7);
  auto other = RandomArguments(*module, 8);
  ASSERT_TRUE(first && again && other);
  ASSERT_EQ(first->size(), 3u);
  for (size_t i = 0; i < first->size(); ++i) EXPECT_EQ((*first)[i], (*again)[i]) << i;
  EXPECT_NE((*first)[0], (*other)[0]);
}

TEST(RandomInputsTest, ValuesStayInRange) {
  auto module = ParseTestModule(kModule);
  auto args = RandomArguments(*module, 1);
  ASSERT_TRUE(args) << args.error().message;
  const hlo::Literal& floats = (*args)[0];
  const hlo::Literal& ints = (*args)[1];
  bool negative = false, positive = false;
  for (int64_t i = 0; i < 64; ++i) {
    float f = floats.Get<float>(i);
    EXPECT_GE(f, -1.0f);
    EXPECT_LT(f, 1.0f);
    negative |= f < 0;
    positive |= f > 0;
    int32_t v = ints.Get<int32_t>(i);
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 4);
  }
  EXPECT_TRUE(negative && positive);
  const hlo::Literal& tuple = (*args)[2];
  ASSERT_TRUE(tuple.shape().IsTuple());
  ASSERT_EQ(tuple.tuple_elements().size(), 3u);
  int trues = 0;
  for (int64_t i = 0; i < 64; ++i) {
    uint8_t p = tuple.tuple_elements()[0].Get<uint8_t>(i);
    EXPECT_LE(p, 1);
    trues += p;
  }
  EXPECT_GT(trues, 0);
  EXPECT_LT(trues, 64);
  for (int64_t i = 0; i < 8; ++i) {
    double v = tuple.tuple_elements()[1].GetAsDouble(i);
    EXPECT_GE(v, -1.0);
    EXPECT_LE(v, 1.0);
  }
}

TEST(RandomInputsTest, ParameterValueDoesNotDependOnOtherParameters) {
  auto one =
      ParseTestModule("HloModule m\nENTRY e { a = f32[4] parameter(0)\n ROOT b = f32[4] parameter(1) }");
  auto two =
      ParseTestModule("HloModule m\nENTRY e { a = s8[9] parameter(0)\n ROOT b = f32[4] parameter(1) }");
  auto x = RandomArguments(*one, 3);
  auto y = RandomArguments(*two, 3);
  ASSERT_TRUE(x && y);
  EXPECT_EQ((*x)[1], (*y)[1]);
}

TEST(RandomInputsTest, SubByteIntegersFitTheirType) {
  auto s2 = RandomLiteral(hlo::Shape(hlo::PrimitiveType::kS2, {100}), 5);
  ASSERT_TRUE(s2);
  for (int64_t i = 0; i < 100; ++i) EXPECT_LE(s2->Get<uint8_t>(i), 1);
}

TEST(RandomInputsTest, TokenParameterGetsAToken) {
  auto module = ParseTestModule("HloModule m\nENTRY e { ROOT t = token[] parameter(0) }");
  auto args = RandomArguments(*module, 0);
  ASSERT_TRUE(args) << args.error().message;
  EXPECT_TRUE((*args)[0].shape().IsToken());
  EXPECT_TRUE((*args)[0].data().empty());
}

TEST(RandomInputsTest, UnboundedDimensionIsAnError) {
  hlo::Shape shape(hlo::PrimitiveType::kF32, {hlo::kUnboundedDim});
  auto value = RandomLiteral(shape, 0);
  ASSERT_FALSE(value);
  EXPECT_NE(value.error().message.find("unbounded"), std::string::npos) << value.error().message;
}

}  // namespace
}  // namespace kiln::runtime::io
