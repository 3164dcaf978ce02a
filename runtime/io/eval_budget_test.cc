#include "runtime/io/eval_budget.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::io {
namespace {

TEST(EvalBudgetTest, CountsParametersResultAndLargestIntermediate) {
  auto module = hlo::ParseModule(R"(
HloModule m
ENTRY e {
  a = f32[10] parameter(0)
  b = (s32[4], u8[2]) parameter(1)
  big = f32[1000] broadcast(a), dimensions={}
  ROOT r = f64[2] constant({1, 2})
})");
  // broadcast of f32[10] to f32[1000] with dimensions={} is not valid HLO,
  // but the estimate only reads shapes.
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(EstimateEvalBytes(**module), 40 + 16 + 2 + 16 + 4000);
  EXPECT_TRUE(CheckEvalMemory(**module, 4074));
  Status over = CheckEvalMemory(**module, 4073);
  ASSERT_FALSE(over);
  EXPECT_TRUE(over.error().message.starts_with("too large to evaluate: needs at least 4074 bytes"))
      << over.error().message;
}

TEST(EvalBudgetTest, SaturatesOnHugeShapes) {
  hlo::Shape huge(hlo::PrimitiveType::kF64, {int64_t{1} << 40, int64_t{1} << 30});
  EXPECT_EQ(HostBytes(huge), INT64_MAX);
  EXPECT_EQ(HostBytes(hlo::Shape::Tuple({huge, huge})), INT64_MAX);
}

}  // namespace
}  // namespace kiln::runtime::io
