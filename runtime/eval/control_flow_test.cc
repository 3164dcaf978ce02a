// while, conditional, call, fusion, map, tuples and async wrappers (the step
// budget and interrupts: interrupt_test.cc).
#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::RunToText;

constexpr const char* kCountTo10 = R"(
HloModule loop
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  double = f32[2] add(v, v)
  ROOT t = (s32[], f32[2]) tuple(next, double)
}
ENTRY e {
  init = f32[2] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[2]) tuple(zero, init)
  ROOT w = (s32[], f32[2]) while(t), condition=cond, body=body
})";

TEST(ControlFlowTest, WhileLoop) {
  EXPECT_EQ(RunToText(kCountTo10, {Lit("f32[2] {1, -0.5}")}), "(s32[] 10, f32[2] {1024, -512})");
}

TEST(ControlFlowTest, ConditionalWithPredAndIndex) {
  const char* hlo = R"(
HloModule cond
neg {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
dbl {
  p = f32[] parameter(0)
  ROOT d = f32[] add(p, p)
}
id {
  p = f32[] parameter(0)
  ROOT c = f32[] copy(p)
}
ENTRY e {
  b = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT r = f32[] conditional(b, x, x, x), branch_computations={neg, dbl, id}
})";
  EXPECT_EQ(RunToText(hlo, {Lit("s32[] 0"), Lit("f32[] 3")}), "f32[] -3");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[] 1"), Lit("f32[] 3")}), "f32[] 6");
  EXPECT_EQ(RunToText(hlo, {Lit("s32[] 7"), Lit("f32[] 3")}), "f32[] 3");  // last branch
  EXPECT_EQ(RunToText(hlo, {Lit("s32[] -1"), Lit("f32[] 3")}), "f32[] 3");

  const char* pred_hlo = R"(
HloModule cond
neg {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
dbl {
  p = f32[] parameter(0)
  ROOT d = f32[] add(p, p)
}
ENTRY e {
  b = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT r = f32[] conditional(b, x, x), true_computation=neg, false_computation=dbl
})";
  EXPECT_EQ(RunToText(pred_hlo, {Lit("pred[] true"), Lit("f32[] 3")}), "f32[] -3");
  EXPECT_EQ(RunToText(pred_hlo, {Lit("pred[] false"), Lit("f32[] 3")}), "f32[] 6");
}

TEST(ControlFlowTest, CallFusionAndMap) {
  const char* hlo = R"(
HloModule calls
sq {
  p = f32[3] parameter(0)
  ROOT m = f32[3] multiply(p, p)
}
fused {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT s = f32[3] subtract(a, b)
}
addone {
  x = f32[] parameter(0)
  one = f32[] constant(1)
  ROOT y = f32[] add(x, one)
}
ENTRY e {
  x = f32[3] parameter(0)
  c = f32[3] call(x), to_apply=sq
  f = f32[3] fusion(c, x), kind=kLoop, calls=fused
  ROOT m = f32[3] map(f), dimensions={0}, to_apply=addone
})";
  EXPECT_EQ(RunToText(hlo, {Lit("f32[3] {1, 2, 3}")}), "f32[3] {1, 3, 7}");
}

TEST(ControlFlowTest, AsyncWrappersAndCopyStart) {
  const char* hlo = R"(
HloModule async
ENTRY e {
  x = f32[2] parameter(0)
  s = ((f32[2]), f32[2], u32[]) negate-start(x)
  d = f32[2] negate-done(s)
  cs = (f32[2], f32[2], u32[]) copy-start(d)
  ROOT cd = f32[2] copy-done(cs)
})";
  EXPECT_EQ(RunToText(hlo, {Lit("f32[2] {1, -2}")}), "f32[2] {-1, 2}");
}

TEST(ControlFlowTest, TuplesAndOptimizationBarrier) {
  const char* hlo = R"(
HloModule tuples
ENTRY e {
  x = f32[2] parameter(0)
  y = s32[] parameter(1)
  t = (f32[2], s32[]) tuple(x, y)
  b = (f32[2], s32[]) opt-barrier(t)
  g = s32[] get-tuple-element(b), index=1
  ROOT r = (s32[], (f32[2], s32[])) tuple(g, b)
})";
  EXPECT_EQ(RunToText(hlo, {Lit("f32[2] {1, 2}"), Lit("s32[] 4")}),
            "(s32[] 4, (f32[2] {1, 2}, s32[] 4))");
}

TEST(ControlFlowTest, ArgumentShapesAreChecked) {
  std::string text = RunToText(kCountTo10, {Lit("f32[3] {1, 2, 3}")});
  EXPECT_EQ(text, "error: argument 0 of %e has shape f32[3] but parameter %init is f32[2]");
  EXPECT_NE(RunToText(kCountTo10, {}).find("takes 1 arguments, got 0"), std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime
