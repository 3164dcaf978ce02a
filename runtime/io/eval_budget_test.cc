#include "runtime/io/eval_budget.h"

#include <gtest/gtest.h>

#include <limits>

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

TEST(EvalBudgetTest, CountsMultiplyAddsOfDotsAndConvolutions) {
  auto module = hlo::ParseModule(R"(
HloModule m
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,5] parameter(1)
  dot = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  img = f32[1,8,8,3] parameter(2)
  k = f32[3,3,3,16] parameter(3)
  conv = f32[1,6,6,16] convolution(img, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT sum = f32[4,5] add(dot, dot)
})");
  ASSERT_TRUE(module) << module.error().message;
  // The dot: 20 results of 6 each; the convolution: 576 results of 3*3*3.
  EXPECT_EQ(EstimateMultiplyAdds(**module), 20 * 6 + 576 * 27);
}

TEST(EvalBudgetTest, MultiplyAddsSaturate) {
  auto module = hlo::ParseModule(R"(
HloModule m
ENTRY e {
  a = f32[3037000500,3037000500] parameter(0)
  b = f32[3037000500,3037000500] parameter(1)
  ROOT dot = f32[3037000500,3037000500] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(EstimateMultiplyAdds(**module), INT64_MAX);
}

TEST(EvalBudgetTest, MessagesGiveTheTrueSizeOfHugeShapes) {
  // 10^12 x 10^9 f32: 4*10^21 bytes, far past int64's 9.2*10^18.
  auto module = hlo::ParseModule(R"(
HloModule huge
ENTRY e {
  p = f32[] parameter(0)
  ROOT b = f32[1000000000000,1000000000] broadcast(p), dimensions={}
})");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(EstimateEvalBytes(**module), INT64_MAX);
  EXPECT_DOUBLE_EQ(HostBytesReal((*module)->entry()->root()->shape()), 4e21);
  Status over = CheckEvalMemory(**module, int64_t{16} << 30);
  ASSERT_FALSE(over);
  // Result plus the same value as the largest one: 8*10^21 bytes = 6.78 ZiB.
  EXPECT_NE(over.error().message.find("needs at least 6.78 ZiB (8e+21 bytes)"), std::string::npos)
      << over.error().message;
  EXPECT_NE(over.error().message.find("budget of 17179869184 bytes (16.00 GiB)"), std::string::npos)
      << over.error().message;
}

TEST(EvalBudgetTest, DescribesByteCounts) {
  EXPECT_EQ(DescribeBytes(512), "512 bytes");
  EXPECT_EQ(DescribeBytes(4074), "4074 bytes (3.98 KiB)");
  EXPECT_EQ(DescribeBytes(4.0 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024), "4.00 EiB (4.61e+18 bytes)");
  EXPECT_EQ(DescribeBytes(1e30), "827180.61 YiB (1e+30 bytes)");
  EXPECT_EQ(DescribeBytes(std::numeric_limits<double>::infinity()), "unbounded");
}

TEST(EvalBudgetTest, LargestInternalValueLeavesOutTheEntrysParametersAndRoot) {
  auto module = hlo::ParseModule(R"(
HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  mid = f32[10] slice(a), slice={[0:10]}
  ROOT r = f32[2000] broadcast(mid), dimensions={}
})");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(LargestInternalValueBytes(**module), 40);
}

}  // namespace
}  // namespace kiln::runtime::io
