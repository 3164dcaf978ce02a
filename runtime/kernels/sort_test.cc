#include <gtest/gtest.h>

#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::RunRoot;
using testing::ScalarTestContext;

TEST(SortTest, StableKeyValueSortAlongRows) {
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[2,4] parameter(0)
  v = s32[2,4] parameter(1)
  ROOT s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt
})", {"f32[2,4] {{3,1,3,1},{0,-1,0,-1}}", "s32[2,4] {{0,1,2,3},{4,5,6,7}}"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("(f32[2,4] {{1,1,3,3},{-1,-1,0,0}}, s32[2,4] {{1,3,0,2},{5,7,4,6}})"));
  EXPECT_EQ(ctx.calls, 0);  // simple comparator: no calls
}

TEST(SortTest, SortAlongLeadingDimensionDescending) {
  auto r = RunRoot(R"(
HloModule m
gt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GT
}
ENTRY e {
  k = s32[3,2] parameter(0)
  ROOT s = s32[3,2] sort(k), dimensions={0}, to_apply=gt
})", {"s32[3,2] {{1,9},{3,7},{2,8}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[3,2] {{3,9},{2,8},{1,7}}"));
}

TEST(SortTest, TotalOrderPlacesNaNsAtTheEnds) {
  auto r = RunRoot(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  k = f32[6] parameter(0)
  ROOT s = f32[6] sort(k), dimensions={0}, to_apply=lt
})", {"f32[6] {nan, 1, -0, -inf, 0, -nan}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->ToString(), "f32[6] {-nan, -inf, -0.0, 0, 1, nan}");
}

TEST(SortTest, GeneralComparatorThroughContextWithTieBreak) {
  // Sort by key descending, ties by value ascending: a two-key comparator.
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(c, d), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  k = s32[5] parameter(0)
  v = s32[5] parameter(1)
  ROOT s = (s32[5], s32[5]) sort(k, v), dimensions={0}, to_apply=cmp
})", {"s32[5] {1,2,1,2,0}", "s32[5] {9,8,7,6,5}"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("(s32[5] {2,2,1,1,0}, s32[5] {6,8,7,9,5})"));
  EXPECT_GT(ctx.calls, 0);
}

TEST(SortTest, NonStrictComparatorDoesNotCrash) {
  // LE is not a strict weak order; the result must still be a permutation.
  auto r = RunRoot(R"(
HloModule m
le {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  one = f32[] constant(1)
  bb = f32[] add(b, one)
  ROOT r = pred[] compare(a, bb), direction=LE
}
ENTRY e {
  k = f32[40] parameter(0)
  ROOT s = f32[40] sort(k), dimensions={0}, to_apply=le
})", {"f32[40] {5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->element_count(), 40);
  for (int64_t i = 0; i < 40; ++i) EXPECT_EQ(r->Get<float>(i), 5.0f);
}

TEST(SortTest, ComparatorArityMismatchIsAnError) {
  auto r = RunRoot(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[2] parameter(0)
  v = f32[2] parameter(1)
  ROOT s = (f32[2], f32[2]) sort(k, v), dimensions={0}, to_apply=lt
})", {"f32[2] {2,1}", "f32[2] {1,2}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("comparator"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
