// Multi-output merges that close a cycle the sibling search did not see:
// the planner undoes the merge that closes it, not every merge.
#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using testing::PlannerTest;

const FusionEdge* SiblingEdge(const FusionPlan& plan, int64_t shared) {
  for (const FusionEdge& e : plan.edges) {
    if (e.is_sibling() && e.producer == shared) return &e;
  }
  return nullptr;
}

// v and w share z, so they merge first: w reads t, a late root. f and t
// share x; f's kernel comes before t in program order, so the search takes
// them for independent. But f reads v, whose merged kernel waits for t:
// merging f and t closes a cycle. Only that merge is undone.
TEST_F(PlannerTest, OnlyTheMergeThatClosesACycleIsUndone) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  z = f32[64,128] parameter(0)
  x = f32[64,128] parameter(1)
  v = f32[64,128] sine(z)
  f = f32[64,128] multiply(f32[64,128] cosine(x), v)
  t = f32[64,128] exponential(x)
  w = f32[64,128] add(f32[64,128] cosine(z), t)
  ROOT r = (f32[64,128], f32[64,128], f32[64,128], f32[64,128]) tuple(v, f, t, w)
})");
  const FusionEdge* kept = SiblingEdge(plan, Index("z"));
  const FusionEdge* undone = SiblingEdge(plan, Index("x"));
  ASSERT_NE(kept, nullptr);
  ASSERT_NE(undone, nullptr);
  EXPECT_TRUE(kept->fused) << kept->reason;
  EXPECT_FALSE(undone->fused);
  EXPECT_EQ(undone->kind, DecisionKind::kLegality);
  EXPECT_NE(undone->reason.find("multi-output fusion undone: fused edges form a cycle"), std::string::npos)
      << undone->reason;
  EXPECT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(&KernelOf("v"), &KernelOf("w"));
}

}  // namespace
}  // namespace kiln::fusion
