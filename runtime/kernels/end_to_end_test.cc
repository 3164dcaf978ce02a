// Heavy ops inside whole modules, run by the evaluator (runtime/eval), which
// dispatches to these kernels through FindHeavyKernel and supplies the real
// EvalContext (reducers and comparators run as computations).

#include <gtest/gtest.h>

#include "runtime/eval/evaluator.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::ParseOrDie;

TEST(EndToEndTest, DenseLayerWithSoftmaxDenominator) {
  auto module = ParseOrDie(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  w = f32[3,2] parameter(1)
  d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(d, z), dimensions={1}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  std::vector<hlo::Literal> args = {LiteralOrDie("f32[2,3] {{1,2,3},{4,5,6}}"),
                                    LiteralOrDie("f32[3,2] {{7,8},{9,10},{11,12}}")};
  auto r = EvaluateModule(*module, args);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2] {122, 293}"));
}

TEST(EndToEndTest, SortWithGeneralComparatorRunsInTheEvaluator) {
  auto module = ParseOrDie(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  na = s32[] negate(a)
  nb = s32[] negate(b)
  ROOT r = pred[] compare(na, nb), direction=LT
}
ENTRY e {
  k = s32[4] parameter(0)
  ROOT s = s32[4] sort(k), dimensions={0}, to_apply=cmp
})");
  ASSERT_NE(module, nullptr);
  std::vector<hlo::Literal> args = {LiteralOrDie("s32[4] {3,1,4,2}")};
  auto r = EvaluateModule(*module, args);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[4] {4,3,2,1}"));
}

}  // namespace
}  // namespace kiln::runtime
