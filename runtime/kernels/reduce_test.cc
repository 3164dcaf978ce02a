#include <gtest/gtest.h>

#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::RunRoot;
using testing::ScalarTestContext;

constexpr char kAddF32[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(ReduceTest, SumRowsUsesFastPath) {
  ScalarTestContext ctx;
  auto r = RunRoot(std::string(kAddF32) + R"(
ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
})", {"f32[2,3] {{1,2,3},{4,5,6}}", "f32[] 10"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2] {16, 25}"));
  EXPECT_EQ(ctx.calls, 0);
}

TEST(ReduceTest, ReduceLeadingAndTrailingDims) {
  auto r = RunRoot(std::string(kAddF32) + R"(
ENTRY e {
  x = f32[2,2,2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={0,2}, to_apply=add
})", {"f32[2,2,2] {{{1,2},{3,4}},{{5,6},{7,8}}}", "f32[] 0"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2] {14, 22}"));
}

TEST(ReduceTest, EmptyReductionGivesInit) {
  auto r = RunRoot(std::string(kAddF32) + R"(
ENTRY e {
  x = f32[3,0] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add
})", {"f32[3,0] {{},{},{}}", "f32[] 7"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[3] {7, 7, 7}"));
}

TEST(ReduceTest, MaxPropagatesNaN) {
  auto r = RunRoot(R"(
HloModule m
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[2,2] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=mx
})", {"f32[2,2] {{1,nan},{3,-2}}", "f32[] -inf"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(std::isnan(r->Get<float>(0)));
  EXPECT_EQ(r->Get<float>(1), 3.0f);
}

TEST(ReduceTest, Bf16AccumulatesInF32) {
  auto r = RunRoot(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[5] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})", {"bf16[5] {256, 1, 1, 1, 1}", "bf16[] 0"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("bf16[] 260"));
}

TEST(ReduceTest, MixedPrecisionReductionFromCorpus) {
  auto r = RunRoot(std::string(kAddF32) + R"(
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})", {"f32[4] {1, 3, -2, 42}", "f32[] 0"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("bf16[] 44"));
}

TEST(ReduceTest, IntegerAndPredReducers) {
  auto r = RunRoot(R"(
HloModule m
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] multiply(a, b)
}
ENTRY e {
  x = s32[3] parameter(0)
  z = s32[] constant(1)
  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=mul
})", {"s32[3] {65536, 65536, 3}", "s32[] 1"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[] 0"));  // 2^32 * 3 wraps to 0

  auto any = RunRoot(R"(
HloModule m
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] or(a, b)
}
ENTRY e {
  x = pred[2,2] parameter(0)
  z = pred[] constant(false)
  ROOT r = pred[2] reduce(x, z), dimensions={1}, to_apply=or
})", {"pred[2,2] {{false,true},{false,false}}", "pred[] false"});
  ASSERT_TRUE(any) << any.error().message;
  EXPECT_EQ(*any, LiteralOrDie("pred[2] {true, false}"));
}

TEST(ReduceTest, VariadicArgmax) {
  // (value, index) pairs; ties keep the lower index.
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] parameter(1)
  zv = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, zv, zi), dimensions={1}, to_apply=argmax
})", {"f32[2,4] {{1,5,2,5},{-1,-3,-2,-7}}", "s32[2,4] {{0,1,2,3},{0,1,2,3}}", "f32[] -inf",
      "s32[] 0"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("(f32[2] {5, -1}, s32[2] {1, 0})"));
  EXPECT_EQ(ctx.calls, 8);
}

TEST(ReduceTest, GeneralReducerGoesThroughContext) {
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
sumsq {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  bb = f32[] multiply(b, b)
  ROOT s = f32[] add(a, bb)
}
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=sumsq
})", {"f32[3] {1, 2, 3}", "f32[] 0"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[] 14"));
  EXPECT_EQ(ctx.calls, 3);
}

TEST(ReduceTest, BadDimensionIsAnError) {
  auto r = RunRoot(std::string(kAddF32) + R"(
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={1}, to_apply=add
})", {"f32[3] {1, 2, 3}", "f32[] 0"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("%r"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
