// Reduction epilogue fusion (reduction_epilogue.cc): which consumers of a
// reduction's result are computed in its kernel, and which are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/fusion/kernel_formation.h"
#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using testing::PlannerTest;

constexpr std::string_view kAdd = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// x minus its row sums: the reduction's result read back over x.
constexpr std::string_view kCentered = R"(
ENTRY e {
  x = f32[256,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  sb = f32[256,1024] broadcast(sum), dimensions={0}
  ROOT centered = f32[256,1024] subtract(x, sb)
})";

std::string Module(std::string_view entry) { return std::string(kAdd) + std::string(entry); }

// mean = sum / n, then a convert: one kernel iterating over x, which
// writes only the bf16 mean.
TEST_F(PlannerTest, AReductionsElementwiseConsumersAreItsEpilogue) {
  const FusionPlan& plan = Plan(Module(R"(
ENTRY e {
  x = f32[256,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  n = f32[] constant(1024)
  ns = f32[256] broadcast(n), dimensions={}
  mean = f32[256] divide(sum, ns)
  ROOT out = bf16[256] convert(mean)
})"));
  ASSERT_EQ(plan.kernels.size(), 1u);
  const Kernel& k = plan.kernels[0];
  EXPECT_EQ(k.kind, KernelKind::kInput);
  EXPECT_EQ(k.roots, std::vector<int64_t>{Index("out")});
  EXPECT_EQ(k.inputs, (std::vector<int64_t>{Index("x"), Index("zero"), Index("n")}));
  ASSERT_TRUE(k.tile.tiled);
  const FusionEdge* edge = Edge("sum", "mean");
  ASSERT_NE(edge, nullptr);
  EXPECT_TRUE(edge->fused);
  EXPECT_EQ(edge->rule, FusionRule::kOutput);
  EXPECT_NE(edge->reason.find("reduction epilogue: %mean (divide)"), std::string::npos) << edge->reason;
}

// Two epilogues of one reduction in one kernel: the reduction joins it once.
TEST_F(PlannerTest, AReductionReadTwiceInsideOneKernelJoinsItOnce) {
  const FusionPlan& plan = Plan(Module(R"(
ENTRY e {
  x = f32[256,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  sq = f32[256] multiply(sum, sum)
  ROOT out = f32[256] add(sq, sum)
})"));
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].instructions.size(), 3u);
  EXPECT_TRUE(Edge("sum", "sq")->fused);
  EXPECT_TRUE(Edge("sum", "out")->fused);
}

// Variance from a sum and a sum of squares of the same rows: both
// reductions walk x once, in one kernel, and the epilogue combines them.
TEST_F(PlannerTest, TwoReductionsOfOneSpaceShareTheirEpiloguesKernel) {
  const FusionPlan& plan = Plan(Module(R"(
ENTRY e {
  x = f32[256,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  xx = f32[256,1024] multiply(x, x)
  sumsq = f32[256] reduce(xx, zero), dimensions={1}, to_apply=add
  sq = f32[256] multiply(sum, sum)
  ROOT var = f32[256] subtract(sumsq, sq)
})"));
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kInput);
  EXPECT_EQ(plan.kernels[0].inputs, (std::vector<int64_t>{Index("x"), Index("zero")}));
  EXPECT_TRUE(Edge("sum", "sq")->fused);
  EXPECT_TRUE(Edge("sumsq", "var")->fused);
}

// Row sums and column sums of one square array have the same result
// shape but walk different spaces: one loop cannot finish both.
TEST_F(PlannerTest, ReductionsAlongOtherDimensionsDoNotShareAnEpilogue) {
  const FusionPlan& plan = Plan(Module(R"(
ENTRY e {
  x = f32[512,512] parameter(0)
  zero = f32[] constant(0)
  rows = f32[512] reduce(x, zero), dimensions={1}, to_apply=add
  cols = f32[512] reduce(x, zero), dimensions={0}, to_apply=add
  ROOT d = f32[512] subtract(rows, cols)
})"));
  EXPECT_EQ(plan.kernels.size(), 2u);
  EXPECT_TRUE(Edge("cols", "d")->fused);
  ExpectRefused("rows", "d", DecisionKind::kLegality, "walks another space than reduction %rows");
}

// The normalization x - mean needs the whole reduction before its first
// element: a broadcast of the result is no epilogue (legality).
TEST_F(PlannerTest, AReductionBroadcastBackOverItsOperandIsNoEpilogue) {
  const FusionPlan& plan = Plan(Module(kCentered));
  EXPECT_EQ(plan.kernels.size(), 2u);
  ExpectRefused("sum", "sb", DecisionKind::kLegality, "%sb (broadcast) is not one");
}

// A reduction also read by a kernel elsewhere is written anyway: the edge
// to its epilogue is refused (fusing would compute the reduction twice),
// and the epilogue's kernel then joins the reduction's as a second output.
TEST_F(PlannerTest, AReductionReadOutsideItsEpilogueTakesItsKernelAsAnOutput) {
  const FusionPlan& plan = Plan(Module(R"(
ENTRY e {
  x = f32[256,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  neg = f32[256] negate(sum)
  sb = f32[256,1024] broadcast(sum), dimensions={0}
  centered = f32[256,1024] subtract(x, sb)
  ROOT t = (f32[256], f32[256,1024]) tuple(neg, centered)
})"));
  ExpectRefused("sum", "neg", DecisionKind::kProfitability, "would compute the reduction twice");
  ASSERT_EQ(plan.kernels.size(), 2u);
  const Kernel& stats = KernelOf("sum");
  EXPECT_EQ(stats.roots, (std::vector<int64_t>{Index("sum"), Index("neg")}));
  EXPECT_EQ(stats.kind, KernelKind::kMultiOutput);
  EXPECT_EQ(&KernelOf("neg"), &stats);
  bool merged = false;
  for (const FusionEdge& e : plan.edges) {
    merged |= e.is_sibling() && e.fused && e.producer == Index("sum") && e.consumer == Index("neg");
  }
  EXPECT_TRUE(merged);
}

// The statistics of a layer norm (torch_xla's batch-norm-training over
// tokens): a sum and a sum of squares share one kernel, and the per-token
// math read by the normalization (mean, rsqrt of the variance) is
// computed there too, although several kernels read it.
// A layer norm's statistics and normalization (torch_xla's
// batch-norm-training over tokens, expanded); the root is appended.
constexpr std::string_view kLayerNorm = R"(
ENTRY e {
  x = f32[512,768] parameter(0)
  zero = f32[] constant(0)
  sum = f32[512] reduce(x, zero), dimensions={1}, to_apply=add
  xx = f32[512,768] multiply(x, x)
  sumsq = f32[512] reduce(xx, zero), dimensions={1}, to_apply=add
  n = f32[] constant(768)
  ns = f32[512] broadcast(n), dimensions={}
  mean = f32[512] divide(sum, ns)
  meansq = f32[512] divide(sumsq, ns)
  m2 = f32[512] multiply(mean, mean)
  var = f32[512] subtract(meansq, m2)
  eps = f32[] constant(1e-5)
  es = f32[512] broadcast(eps), dimensions={}
  r = f32[512] rsqrt(f32[512] add(var, es))
  mb = f32[512,768] broadcast(mean), dimensions={0}
  rb = f32[512,768] broadcast(r), dimensions={0}
  y = f32[512,768] multiply(f32[512,768] subtract(x, mb), rb)
)";

TEST_F(PlannerTest, LayerNormStatisticsAndTheirMathAreOneKernel) {
  const FusionPlan& plan = Plan(Module(std::string(kLayerNorm) + "  ROOT t = (f32[512,768], f32[512], f32[512]) tuple(y, mean, var)\n}"));
  ASSERT_EQ(plan.kernels.size(), 2u);
  const Kernel& stats = KernelOf("mean");
  EXPECT_EQ(&KernelOf("r"), &stats);
  EXPECT_EQ(&KernelOf("var"), &stats);
  EXPECT_NE(&KernelOf("y"), &stats);
  const std::vector<int64_t>& in = stats.instructions;
  EXPECT_NE(std::find(in.begin(), in.end(), Index("sumsq")), in.end());
}

// When the variance is not returned, the sum of squares, the variance and
// its rsqrt form one kernel that reads the mean; it still joins the mean's
// kernel, as a reduction of the same space that reads the mean only in its
// epilogue.
TEST_F(PlannerTest, AReductionKernelReadingAnotherOfItsSpaceInItsEpilogueJoinsIt) {
  const FusionPlan& plan = Plan(Module(std::string(kLayerNorm) + "  ROOT t = (f32[512,768], f32[512]) tuple(y, mean)\n}"));
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(&KernelOf("r"), &KernelOf("mean"));
}

// An elementwise op over the result that also reads a larger array runs
// over that array's space: no epilogue.
TEST_F(PlannerTest, AnEpilogueKernelOverALargerSpaceIsRefused) {
  const FusionPlan& plan = Plan(Module(R"(
ENTRY e {
  x = f32[256,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  neg = f32[256] negate(sum)
  nb = f32[256,1024] broadcast(neg), dimensions={0}
  ROOT out = f32[256,1024] multiply(x, nb)
})"));
  ExpectRefused("sum", "neg", DecisionKind::kLegality, "writes %out [256,1024], not reduction %sum's result [256]");
  EXPECT_EQ(plan.kernels.size(), 2u);
}

// An edited plan (the tuner's, a user's) may not fuse a reduction into
// anything but an epilogue.
TEST_F(PlannerTest, FusingAReductionIntoABroadcastIsRejectedOnEditedPlans) {
  Plan(Module(kCentered));
  FusionPlan edited = plan_;
  for (FusionEdge& e : edited.edges) e.fused = true;
  auto formed = FormKernels(*module_->entry(), options_.tiling, edited);
  ASSERT_FALSE(formed.has_value());
  EXPECT_EQ(formed.error().message,
            "fused edge %sum -> %sb: reduction %sum (reduce) computes only elementwise consumers of its "
            "result's dimensions in its kernel, not %sb (broadcast)");
}

}  // namespace
}  // namespace kiln::fusion
