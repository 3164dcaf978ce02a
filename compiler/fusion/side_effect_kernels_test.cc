// A side-effecting custom call nothing reads (a StableHLO check) is still a
// kernel of the plan, so the compiled program runs it.
#include <gtest/gtest.h>

#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using testing::PlannerTest;

TEST_F(PlannerTest, UnreadSideEffectingCustomCallIsAKernel) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[8] add(x, y)
  check = () custom-call(s, y), custom_call_target="check.expect_eq", custom_call_has_side_effect=true
  ROOT t = f32[8] tanh(s)
})");
  EXPECT_GE(plan.root_kernel[Index("check")], 0);
  EXPECT_GE(plan.root_kernel[Index("t")], 0);
}

TEST_F(PlannerTest, UnreadPureCustomCallIsNoKernel) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  unread = f32[8] custom-call(x), custom_call_target="Sharding", sharding={replicated}
  ROOT t = f32[8] tanh(x)
})");
  EXPECT_LT(plan.root_kernel[Index("unread")], 0);
}

}  // namespace
}  // namespace kiln::fusion
