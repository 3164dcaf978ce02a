// The builders' math custom-calls ("xla_builder.math.Cosh", ...).
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;

using testing::RunToText;

double Apply(const char* target, const char* type, double x) {
  std::string op = std::string("custom-call(x), custom_call_target=\"") + target + "\"";
  auto r = testing::Run(OneOp(std::string(type) + "[] x", std::string(type) + "[]", op),
                        {Lit(std::string(type) + "[] " + std::to_string(x))});
  EXPECT_TRUE(r.has_value()) << target << ": " << (r ? "" : r.error().message);
  return r ? r->GetAsDouble(0) : std::nan("");
}

TEST(CustomCallMathTest, ComputesEachFunction) {
  EXPECT_DOUBLE_EQ(Apply("xla_builder.math.Cosh", "f64", 0.5), std::cosh(0.5));
  EXPECT_DOUBLE_EQ(Apply("xla_builder.math.Acosh", "f64", 2.0), std::acosh(2.0));
  EXPECT_DOUBLE_EQ(Apply("xla_builder.math.Asin", "f64", 0.5), std::asin(0.5));
  EXPECT_DOUBLE_EQ(Apply("xla_builder.math.Asinh", "f64", 0.5), std::asinh(0.5));
  EXPECT_DOUBLE_EQ(Apply("xla_builder.math.Atan", "f64", 0.5), std::atan(0.5));
  EXPECT_DOUBLE_EQ(Apply("xla_builder.math.Acos", "f64", 0.5), std::acos(0.5));
  EXPECT_FLOAT_EQ(static_cast<float>(Apply("xla_builder.math.Cosh", "f32", 1.0)),
                  static_cast<float>(std::cosh(1.0)));
  EXPECT_TRUE(std::isnan(Apply("xla_builder.math.Asin", "f32", 2.0)));
}

TEST(CustomCallMathTest, RejectsIntegersAndUnknownTargets) {
  EXPECT_NE(RunToText(OneOp("s32[] x", "s32[]",
                            "custom-call(x), custom_call_target=\"xla_builder.math.Cosh\""),
                      {Lit("s32[] 1")})
                .find("needs a floating-point or complex array"),
            std::string::npos);
  EXPECT_NE(RunToText(OneOp("f32[] x", "f32[]",
                            "custom-call(x), custom_call_target=\"xla_builder.math.Nope\""),
                      {Lit("f32[] 1")})
                .find("unsupported custom-call target \"xla_builder.math.Nope\""),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime
