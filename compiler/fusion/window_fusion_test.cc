// Window ops (depthwise convolutions, reduce-windows) in the heuristic
// plan: their elementwise epilogues join their kernel, their operands are
// read from HBM, and a kernel holds one window op and no reduction or MXU
// op beside it.
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using testing::PlannerTest;

bool Holds(const Kernel& kernel, int64_t index) {
  return std::find(kernel.instructions.begin(), kernel.instructions.end(), index) !=
         kernel.instructions.end();
}

// MobileNet's depthwise layer as torch_xla traces it in inference: the
// convolution, the batch norm's scale and shift, ReLU6. XLA computes them
// in one output fusion; so does kiln.
TEST_F(PlannerTest, DepthwiseConvolutionTakesItsBatchNormAndActivationAsAnEpilogue) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[8,28,28,96] parameter(0)
  w = f32[3,3,1,96] parameter(1)
  scale = f32[96] parameter(2)
  shift = f32[96] parameter(3)
  c = f32[8,28,28,96] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=96
  s = f32[8,28,28,96] broadcast(scale), dimensions={3}
  m = f32[8,28,28,96] multiply(c, s)
  t = f32[8,28,28,96] broadcast(shift), dimensions={3}
  a = f32[8,28,28,96] add(m, t)
  zero = f32[] constant(0)
  six = f32[] constant(6)
  lo = f32[8,28,28,96] broadcast(zero), dimensions={}
  hi = f32[8,28,28,96] broadcast(six), dimensions={}
  ROOT r = f32[8,28,28,96] clamp(lo, a, hi)
})");
  ASSERT_EQ(plan_.kernels.size(), 1u);
  const Kernel& kernel = KernelOf("r");
  for (const char* name : {"c", "m", "a", "lo", "hi"}) EXPECT_TRUE(Holds(kernel, Index(name))) << name;
  EXPECT_EQ(kernel.kind, KernelKind::kLoop);
  const FusionEdge* epilogue = Edge("c", "m");
  ASSERT_NE(epilogue, nullptr);
  EXPECT_TRUE(epilogue->fused);
  EXPECT_EQ(epilogue->rule, FusionRule::kOutput);
  EXPECT_EQ(epilogue->reason, "output fusion: %m (multiply) is an elementwise epilogue of window op %c");
  // Its input and weights are read from HBM, once.
  EXPECT_EQ(kernel.inputs.size(), 6u);  // x, w, scale, shift, zero, six
  EXPECT_TRUE(kernel.tile.tiled);
}

// A producer of a depthwise convolution's input would be recomputed for
// every tap of the window: it stays a kernel of its own.
TEST_F(PlannerTest, WindowOpsReadTheirOperandsFromHbm) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[8,28,28,96] parameter(0)
  w = f32[3,3,1,96] parameter(1)
  n = f32[8,28,28,96] negate(x)
  ROOT c = f32[8,28,28,96] convolution(n, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=96
})");
  ExpectRefused("n", "c", DecisionKind::kLegality, "is a window op: it reads %n (negate) from HBM");
  EXPECT_EQ(plan_.kernels.size(), 2u);
}

// In training, the batch norm's statistics reduce the convolution's
// result: the reduction stays out of the window's kernel, and the window op
// is not recomputed in the other kernels that read it.
TEST_F(PlannerTest, AWindowOpWithAReductionReaderIsWrittenOnce) {
  Plan(R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,28,28,96] parameter(0)
  w = f32[3,3,1,96] parameter(1)
  c = f32[8,28,28,96] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=96
  zero = f32[] constant(0)
  mean = f32[96] reduce(c, zero), dimensions={0,1,2}, to_apply=sum
  mb = f32[8,28,28,96] broadcast(mean), dimensions={3}
  centred = f32[8,28,28,96] subtract(c, mb)
  ROOT out = (f32[96], f32[8,28,28,96]) tuple(mean, centred)
})");
  ExpectRefused("c", "mean", DecisionKind::kLegality, "is a window op: its kernel computes only elementwise");
  ExpectRefused("c", "centred", DecisionKind::kProfitability, "expensive");
  EXPECT_GE(plan_.root_kernel[Index("c")], 0);
}

// A max pool (reduce-window) takes its epilogue too, but a second window
// op does not share its kernel, nor does a convolution on the MXU: the
// kernel's loop follows the one window's result.
constexpr const char* kPools = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[8,56,56,128] parameter(0)
  y = f32[8,28,28,128] parameter(1)
  w = f32[1,1,128,128] parameter(2)
  ninf = f32[] constant(-inf)
  k = f32[8,28,28,128] convolution(y, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  p = f32[8,28,28,128] reduce-window(x, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max
  q = f32[8,28,28,128] reduce-window(y, ninf), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  a = f32[8,28,28,128] add(p, q)
  ROOT r = f32[8,28,28,128] add(a, k)
})";

TEST_F(PlannerTest, OneWindowOpPerKernel) {
  Plan(kPools);
  const FusionEdge* pa = Edge("p", "a");
  const FusionEdge* qa = Edge("q", "a");
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(qa, nullptr);
  // The later pool joins the add (the plan walks from the root); the other
  // is refused by name.
  EXPECT_TRUE(qa->fused) << qa->reason;
  EXPECT_EQ(qa->rule, FusionRule::kOutput);
  EXPECT_FALSE(pa->fused);
  EXPECT_EQ(pa->kind, DecisionKind::kLegality);
  EXPECT_EQ(pa->reason,
            "the kernel of %a (add) already has %q (reduce-window): window op %p (reduce-window) takes only "
            "elementwise epilogues in a loop over its result");
  const FusionEdge* kr = Edge("k", "r");
  ASSERT_NE(kr, nullptr);
  EXPECT_FALSE(kr->fused);
  EXPECT_EQ(kr->reason,
            "the kernel of %r (add) already contains window op %q (reduce-window): its loop follows "
            "the window's result");
  EXPECT_TRUE(Holds(KernelOf("r"), Index("q")));
}

// A transposing kernel over its scoped VMEM with its smallest blocks takes
// the broadcasts of scalars it reads: each replaces a whole input block by
// nothing, so fusing one leaves the kernel nearer to fitting, and the last
// makes it fit.
TEST_F(PlannerTest, BroadcastsIntoAKernelOverItsVmemAreFusedWhenTheyShrinkIt) {
  // Minimal blocks are 128x128 f32 (64 KiB) for each array: x (read
  // transposed), r, and the two broadcasts while materialized.
  options_.tiling.scoped_vmem_bytes = 300 << 10;
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[2048,2048]{0,1} parameter(0)
  zero = f32[] constant(0)
  six = f32[] constant(6)
  lo = f32[2048,2048] broadcast(zero), dimensions={}
  hi = f32[2048,2048] broadcast(six), dimensions={}
  ROOT r = f32[2048,2048] clamp(lo, x, hi)
})");
  for (const char* b : {"lo", "hi"}) {
    const FusionEdge* edge = Edge(b, "r");
    ASSERT_NE(edge, nullptr);
    EXPECT_TRUE(edge->fused) << b << ": " << edge->reason;
  }
  ASSERT_EQ(plan_.kernels.size(), 1u);
  EXPECT_LE(plan_.kernels[0].tile.vmem_bytes, options_.tiling.scoped_vmem_bytes);
}

}  // namespace
}  // namespace kiln::fusion
