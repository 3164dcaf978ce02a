#include <gtest/gtest.h>

#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::RunRoot;
using testing::ScalarTestContext;

TEST(ReduceWindowTest, MaxPoolWithPaddingAndStride) {
  auto r = RunRoot(R"(
HloModule m
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,4] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=3x3 stride=2x2 pad=1_0x1_0}, to_apply=mx
})", {"f32[4,4] {{1,2,3,4},{5,6,7,8},{9,10,11,12},{13,14,15,16}}", "f32[] -inf"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2,2] {{6,8},{14,16}}"));
}

TEST(ReduceWindowTest, SumWithBaseAndWindowDilation) {
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[3] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce-window(x, z), window={size=2 lhs_dilate=2 rhs_dilate=2}, to_apply=add
})", {"s32[3] {1,2,3}", "s32[] 100"}, &ctx);
  // Dilated base {1,_,2,_,3}; windows {0,2},{1,3},{2,4} read {1,2},{},{2,3}.
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[3] {103,100,105}"));
  EXPECT_EQ(ctx.calls, 0);
}

TEST(ReduceWindowTest, VariadicGeneralReducer) {
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
minmax {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  lo = f32[] minimum(a, c)
  hi = f32[] maximum(b, d)
  ROOT t = (f32[], f32[]) tuple(lo, hi)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  i = f32[] constant(inf)
  j = f32[] constant(-inf)
  ROOT r = (f32[3], f32[3]) reduce-window(x, y, i, j), window={size=2}, to_apply=minmax
})", {"f32[4] {4,1,3,2}", "f32[4] {4,1,3,2}", "f32[] inf", "f32[] -inf"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("(f32[3] {1,1,2}, f32[3] {4,3,3})"));
  EXPECT_EQ(ctx.calls, 6);
}

TEST(ReduceWindowTest, WrongResultShapeIsAnError) {
  auto r = RunRoot(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(x, z), window={size=2}, to_apply=add
})", {"f32[4] {1,2,3,4}", "f32[] 0"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("%r"), std::string::npos) << r.error().message;
}

TEST(SelectAndScatterTest, MaxPoolGradient) {
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  s = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2}, select=ge, scatter=add
})", {"f32[4] {1,5,5,2}", "f32[3] {10,20,30}", "f32[] 0"}, &ctx);
  // Windows {1,5}->5@1, {5,5}->first 5@1 (GE keeps it), {5,2}->5@2.
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[4] {0,30,30,0}"));
}

TEST(SelectAndScatterTest, PaddedWindows) {
  auto r = RunRoot(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] constant(1)
  ROOT r = f32[3] select-and-scatter(x, s, z), window={size=2 stride=2 pad=1_0},
      select=ge, scatter=add
})", {"f32[3] {3,1,2}", "f32[2] {10,20}", "f32[] 1"});
  // Windows {pad,3}->0, {1,2}->2.
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[3] {11,1,21}"));
}

}  // namespace
}  // namespace kiln::runtime
