// One test per fusion rule and per refusal reason of the heuristic, plus
// the `none` and `given` plans.
#include "compiler/fusion/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/fusion/kernel_formation.h"
#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using passes::testing::ParseVerified;
using testing::PlannerTest;

TEST_F(PlannerTest, LoopFusionTakesElementwiseChainWithBroadcasts) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[256,512] parameter(0)
  b = f32[512] parameter(1)
  bb = f32[256,512] broadcast(b), dimensions={1}
  two = f32[] constant(2)
  twos = f32[256,512] broadcast(two), dimensions={}
  a = f32[256,512] add(x, bb)
  m = f32[256,512] multiply(a, twos)
  ROOT t = f32[256,512] tanh(m)
})");
  ASSERT_EQ(plan.kernels.size(), 1u);
  const Kernel& k = plan.kernels[0];
  EXPECT_EQ(k.kind, KernelKind::kLoop);
  EXPECT_EQ(k.instructions.size(), 5u);
  EXPECT_EQ(k.roots, std::vector<int64_t>{Index("t")});
  EXPECT_EQ(k.inputs, (std::vector<int64_t>{Index("x"), Index("b"), Index("two")}));
  const FusionEdge* edge = Edge("bb", "a");
  ASSERT_NE(edge, nullptr);
  EXPECT_TRUE(edge->fused);
  EXPECT_EQ(edge->rule, FusionRule::kLoop);
}

TEST_F(PlannerTest, InputFusionTakesReductionProducers) {
  const FusionPlan& plan = Plan(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[128,1024] parameter(0)
  ex = f32[128,1024] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[128] reduce(ex, zero), dimensions={1}, to_apply=add
})");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kInput);
  const FusionEdge* edge = Edge("ex", "r");
  ASSERT_NE(edge, nullptr);
  EXPECT_TRUE(edge->fused);
  EXPECT_EQ(edge->rule, FusionRule::kInput);
  EXPECT_NE(edge->reason.find("input fusion into reduction %r"), std::string::npos);
}

TEST_F(PlannerTest, OutputFusionTakesDotEpilogue) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = bf16[256,512] parameter(0)
  w = bf16[512,1024] parameter(1)
  bias = bf16[1024] parameter(2)
  d = bf16[256,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = bf16[256,1024] broadcast(bias), dimensions={1}
  a = bf16[256,1024] add(d, bb)
  zero = bf16[] constant(0)
  zeros = bf16[256,1024] broadcast(zero), dimensions={}
  ROOT relu = bf16[256,1024] maximum(a, zeros)
})");
  ASSERT_EQ(plan.kernels.size(), 1u);
  const Kernel& k = plan.kernels[0];
  EXPECT_EQ(k.kind, KernelKind::kOutput);
  const FusionEdge* edge = Edge("d", "a");
  ASSERT_NE(edge, nullptr);
  EXPECT_TRUE(edge->fused);
  EXPECT_EQ(edge->rule, FusionRule::kOutput);
  // Producers are not fused into the dot itself.
  EXPECT_EQ(k.inputs, (std::vector<int64_t>{Index("x"), Index("w"), Index("bias"), Index("zero")}));
  ASSERT_TRUE(k.tile.tiled);
  EXPECT_EQ(k.tile.grid.size(), 4u);
}

// torch_xla views a matmul's [tokens, hidden] result as [batch, seq,
// hidden] before the residual add: the view keeps the bytes in place, so
// the add is still the dot's epilogue.
TEST_F(PlannerTest, OutputFusionReachesTheEpilogueThroughAReshapeThatMovesNoBytes) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = bf16[512,768] parameter(0)
  w = bf16[768,768] parameter(1)
  r = bf16[4,128,768] parameter(2)
  d = bf16[512,768] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  view = bf16[4,128,768] reshape(d)
  ROOT y = bf16[4,128,768] add(view, r)
})");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kOutput);
  ASSERT_TRUE(plan.kernels[0].tile.tiled);
  EXPECT_TRUE(Edge("d", "view")->fused);
}

// A reshape that changes the minor dimension moves bytes between tiles:
// the dot writes its result and the reshape's kernel reads it.
TEST_F(PlannerTest, AReshapeThatMovesBytesIsNoDotEpilogue) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = bf16[512,768] parameter(0)
  w = bf16[768,768] parameter(1)
  r = bf16[4,128,12,64] parameter(2)
  d = bf16[512,768] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  heads = bf16[4,128,12,64] reshape(d)
  ROOT y = bf16[4,128,12,64] add(heads, r)
})");
  EXPECT_EQ(plan.kernels.size(), 2u);
  ExpectRefused("d", "heads", DecisionKind::kLegality, "%heads (reshape) is neither");
}

TEST_F(PlannerTest, SiblingsReadingTheSameInputBecomeOneMultiOutputKernel) {
  const FusionPlan& plan = Plan(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  zero = f32[] constant(0)
  sum = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  sq = f32[64,256] multiply(x, x)
  sumsq = f32[64] reduce(sq, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[64], f32[64]) tuple(sum, sumsq)
})");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kMultiOutput);
  EXPECT_EQ(plan.kernels[0].roots.size(), 2u);
  bool found = false;
  for (const FusionEdge& e : plan.edges) {
    if (e.is_sibling() && e.fused) {
      found = true;
      EXPECT_EQ(e.rule, FusionRule::kMultiOutput);
      EXPECT_EQ(e.producer, Index("x"));
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(PlannerTest, KernelsSharingOnlyAScalarAreOfferedUnfusedToTheTuner) {
  // An optimizer step: each update reads its own parameter and gradient and
  // the shared learning rate, a 4-byte value.
  Plan(R"(
HloModule m
ENTRY e {
  lr = f32[] parameter(0)
  w1 = f32[16] parameter(1)
  g1 = f32[16] parameter(2)
  w2 = f32[16] parameter(3)
  g2 = f32[16] parameter(4)
  w3 = f32[8,16] parameter(5)
  g3 = f32[8,16] parameter(6)
  s1 = f32[16] broadcast(lr), dimensions={}
  d1 = f32[16] multiply(s1, g1)
  u1 = f32[16] subtract(w1, d1)
  s2 = f32[16] broadcast(lr), dimensions={}
  d2 = f32[16] multiply(s2, g2)
  u2 = f32[16] subtract(w2, d2)
  s3 = f32[8,16] broadcast(lr), dimensions={}
  d3 = f32[8,16] multiply(s3, g3)
  u3 = f32[8,16] subtract(w3, d3)
  ROOT t = (f32[16], f32[16], f32[8,16]) tuple(u1, u2, u3)
})");
  // The heuristic keeps three kernels ...
  EXPECT_EQ(plan_.kernels.size(), 3u);
  // ... and offers the pair of one shape as a multi-output choice, the
  // update of another shape as a horizontal one.
  std::map<FusionRule, const FusionEdge*> offered;
  for (const FusionEdge& e : plan_.edges) {
    if (!e.is_sibling()) continue;
    EXPECT_FALSE(e.fused);
    EXPECT_EQ(e.kind, DecisionKind::kProfitability);
    EXPECT_EQ(e.producer, Index("lr"));
    EXPECT_NE(e.reason.find("share only %lr (4 B)"), std::string::npos) << e.reason;
    offered[e.rule] = &e;
  }
  ASSERT_EQ(offered.size(), 2u);
  const FusionEdge* same = offered[FusionRule::kMultiOutput];
  const FusionEdge* across = offered[FusionRule::kHorizontal];
  ASSERT_TRUE(same != nullptr && across != nullptr);
  EXPECT_EQ(std::min(same->consumer, same->sibling), Index("u1"));
  EXPECT_EQ(std::max(same->consumer, same->sibling), Index("u2"));
  EXPECT_EQ(std::max(across->consumer, across->sibling), Index("u3"));
  EXPECT_NE(across->reason.find("on whole arrays"), std::string::npos) << across->reason;

  // Flipped, the two updates of one shape become one tiled kernel ...
  FusionPlan edited = plan_;
  edited.edges[same - plan_.edges.data()].fused = true;
  ASSERT_TRUE(FormKernels(*module_->entry(), options_.tiling, edited).has_value());
  ASSERT_EQ(edited.kernels.size(), 2u);
  EXPECT_TRUE(ValidatePlan(*module_->entry(), options_.tiling, edited).has_value());
  int64_t k = edited.root_kernel[Index("u1")];
  ASSERT_GE(k, 0);
  EXPECT_EQ(edited.root_kernel[Index("u2")], k);
  EXPECT_EQ(edited.kernels[k].kind, KernelKind::kMultiOutput);
  EXPECT_TRUE(edited.kernels[k].tile.tiled);
  // ... and with the other flipped too, all three one horizontal kernel on
  // whole arrays: 7 inputs and 3 outputs, each one (8,128) f32 tile.
  edited.edges[across - plan_.edges.data()].fused = true;
  ASSERT_TRUE(FormKernels(*module_->entry(), options_.tiling, edited).has_value());
  ASSERT_EQ(edited.kernels.size(), 1u);
  EXPECT_TRUE(ValidatePlan(*module_->entry(), options_.tiling, edited).has_value());
  const Kernel& all = edited.kernels[0];
  EXPECT_EQ(all.kind, KernelKind::kHorizontal);
  EXPECT_EQ(all.roots.size(), 3u);
  EXPECT_FALSE(all.tile.tiled);
  EXPECT_EQ(all.tile.vmem_bytes, 10 * 4096);
  // A tile on it is caught.
  FusionPlan tampered = edited;
  tampered.kernels[0].tile.tiled = true;
  EXPECT_FALSE(ValidatePlan(*module_->entry(), options_.tiling, tampered).has_value());
}

TEST_F(PlannerTest, AHorizontalKernelMustFitTheScopedVmemWholeAndHoldNoDot) {
  options_.tiling.scoped_vmem_bytes = 1 << 20;
  Plan(R"(
HloModule m
ENTRY e {
  lr = f32[] parameter(0)
  w1 = f32[512,256] parameter(1)
  w2 = f32[256,256] parameter(2)
  w3 = f32[8,128] parameter(3)
  m3 = f32[128,128] parameter(4)
  s1 = f32[512,256] broadcast(lr), dimensions={}
  u1 = f32[512,256] multiply(s1, w1)
  s2 = f32[256,256] broadcast(lr), dimensions={}
  u2 = f32[256,256] multiply(s2, w2)
  s3 = f32[8,128] broadcast(lr), dimensions={}
  d3 = f32[8,128] dot(w3, m3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  u3 = f32[8,128] multiply(s3, d3)
  ROOT t = (f32[512,256], f32[256,256], f32[8,128]) tuple(u1, u2, u3)
})");
  // u1 and u2 together need 1.5 MiB whole: no horizontal choice; u3's
  // kernel holds a dot: none either.
  for (const FusionEdge& e : plan_.edges) EXPECT_NE(e.rule, FusionRule::kHorizontal) << e.reason;
  // An edited plan that merges them anyway is refused, saying why.
  for (auto [a, b, why] : {std::tuple{"u1", "u2", "of VMEM for its whole arrays"},
                           std::tuple{"u2", "u3", "needs a kernel of its own grid"}}) {
    FusionPlan edited = plan_;
    edited.edges.push_back({Index("lr"), Index(a), Index(b), FusionRule::kHorizontal, true, "edited",
                            DecisionKind::kProfitability});
    Status formed = FormKernels(*module_->entry(), options_.tiling, edited);
    ASSERT_FALSE(formed.has_value()) << a << " + " << b;
    EXPECT_NE(formed.error().message.find(why), std::string::npos) << formed.error().message;
  }
}

TEST_F(PlannerTest, RefusesToRecomputeAnExpensiveProducerWithSeveralConsumers) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  w = f32[128,128] parameter(1)
  d = f32[128,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[128,128] add(d, x)
  s = f32[128,128] subtract(d, x)
  ROOT t = (f32[128,128], f32[128,128]) tuple(a, s)
})");
  const FusionEdge* edge = Edge("d", "a");
  ASSERT_NE(edge, nullptr);
  EXPECT_FALSE(edge->fused);
  EXPECT_EQ(edge->reason,
            "producer %d is expensive and has 2 consumers: fusing would recompute it");
  EXPECT_EQ(KernelOf("d").kind, KernelKind::kSingle);
}

constexpr std::string_view kSoftmax = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  zero = f32[] constant(0)
  e = f32[64,256] exponential(x)
  sum = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[64,256] broadcast(sum), dimensions={0}
  ROOT d = f32[64,256] divide(e, sb)
})";

// A softmax: e = exp(x) has two consumers, its sum and e / sum. e is
// computed once, in its sum's kernel, which also writes it for the division.
TEST_F(PlannerTest, AnExpensiveProducerIsComputedInItsReductionsKernelAndWrittenOnce) {
  const FusionPlan& plan = Plan(kSoftmax);
  EXPECT_FALSE(Edge("e", "sum")->fused);
  const Kernel& kernel = KernelOf("sum");
  EXPECT_EQ(kernel.kind, KernelKind::kMultiOutput);
  EXPECT_EQ(kernel.roots, (std::vector<int64_t>{Index("e"), Index("sum")}));
  EXPECT_EQ(kernel.inputs, (std::vector<int64_t>{Index("x"), Index("zero")}));
  EXPECT_EQ(plan.root_kernel[Index("e")], kernel.id);
  EXPECT_EQ(plan.kernels.size(), 2u);  // and e / sum
  int merges = 0;
  for (const FusionEdge& edge : plan.edges) {
    if (!edge.is_sibling() || edge.sibling != Index("e")) continue;
    ++merges;
    EXPECT_TRUE(edge.fused);
    EXPECT_EQ(edge.consumer, Index("sum"));
    EXPECT_EQ(edge.kind, DecisionKind::kProfitability);
    EXPECT_EQ(edge.reason,
              "multi-output fusion: the kernel of %sum computes %e and writes it for 1 other "
              "consumer");
  }
  EXPECT_EQ(merges, 1);
}

// Two statistics of one expensive value (its sum and its sum of squares)
// share one kernel as siblings; the value is then computed once inside that
// kernel and never written, since no other kernel reads it.
TEST_F(PlannerTest, AnExpensiveValueAllOfWhoseReadersShareAKernelIsNotWritten) {
  const FusionPlan& plan = Plan(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  zero = f32[] constant(0)
  e = f32[64,256] exponential(x)
  sum = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sq = f32[64,256] multiply(e, e)
  sumsq = f32[64] reduce(sq, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[64], f32[64]) tuple(sum, sumsq)
})");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].roots, (std::vector<int64_t>{Index("sum"), Index("sumsq")}));
  EXPECT_EQ(plan.kernels[0].inputs, (std::vector<int64_t>{Index("x"), Index("zero")}));
  EXPECT_EQ(plan.root_kernel[Index("e")], -1);
  for (const char* consumer : {"sum", "sq"}) {
    const FusionEdge* edge = Edge("e", consumer);
    ASSERT_NE(edge, nullptr);
    EXPECT_TRUE(edge->fused);
    EXPECT_EQ(edge->reason,
              "every consumer that reads %e is in the kernel of %sumsq: it is computed there once "
              "and not written");
  }
}

// Once every consumer computes the value itself (the autotuner fused each
// edge), the merge into its reader's kernel has nothing left to merge.
TEST_F(PlannerTest, AMergedValueThatIsNoLongerWrittenLeavesItsReadersKernelsAsTheyAre) {
  Plan(kSoftmax);
  FusionPlan edited = plan_;
  for (FusionEdge& edge : edited.edges) {
    if (!edge.is_sibling() && edge.producer == Index("e")) edge.fused = true;
  }
  Status formed = FormKernels(*module_->entry(), options_.tiling, edited);
  ASSERT_TRUE(formed.has_value()) << formed.error().message;
  EXPECT_EQ(edited.root_kernel[Index("e")], -1);
  EXPECT_EQ(edited.kernels.size(), 2u);  // e in the sum's kernel and in the division's
  ASSERT_GE(edited.root_kernel[Index("sum")], 0);
  EXPECT_EQ(edited.kernels[edited.root_kernel[Index("sum")]].roots,
            (std::vector<int64_t>{Index("sum")}));
}

TEST_F(PlannerTest, AProducerJoinsNoConsumerThatReadsItElsewhereOrThroughAnotherKernel) {
  // t reads e transposed: e's block is not the one the kernel iterates
  // over. s2 reads e both directly and through r, another kernel's sum.
  Plan(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[128,128] parameter(0)
  zero = f32[] constant(0)
  e = f32[128,128] exponential(x)
  t = f32[128,128] transpose(e), dimensions={1,0}
  l = f32[128,128] log(t)
  r = f32[128] reduce(l, zero), dimensions={1}, to_apply=add
  rb = f32[128,128] broadcast(r), dimensions={0}
  m = f32[128,128] multiply(e, rb)
  s2 = f32[128] reduce(m, zero), dimensions={1}, to_apply=add
  ROOT out = (f32[128], f32[128,128]) tuple(s2, e)
})");
  std::vector<std::string> reasons;
  for (const FusionEdge& edge : plan_.edges) {
    if (edge.is_sibling() && edge.sibling == Index("e")) {
      EXPECT_FALSE(edge.fused) << edge.reason;
      EXPECT_EQ(edge.kind, DecisionKind::kLegality);
      reasons.push_back(edge.reason);
    }
  }
  EXPECT_EQ(reasons, (std::vector<std::string>{
                         "%t (transpose) reads %e at other elements than the kernel of %r iterates over",
                         "siblings %s2 and %e depend on each other: merging them would create a cycle"}));
  EXPECT_EQ(KernelOf("e").kind, KernelKind::kSingle);
}

TEST_F(PlannerTest, DuplicatesCheapProducersIntoEachConsumer) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  n = f32[128,128] negate(x)
  a = f32[128,128] add(n, x)
  s = f32[128,128] subtract(n, x)
  ROOT t = (f32[128,128], f32[128,128]) tuple(a, s)
})");
  EXPECT_TRUE(Edge("n", "a")->fused);
  EXPECT_TRUE(Edge("n", "s")->fused);
  // Both consumers compute n; they then merge as siblings reading x.
  EXPECT_EQ(plan.root_kernel[Index("n")], -1);
}

// A broadcast is never written to HBM for its consumers, however many:
// reading its operand costs less than reading it (an optimizer's learning
// rate, broadcast to every parameter's update).
TEST_F(PlannerTest, ABroadcastIsComputedInEveryConsumerHoweverMany) {
  std::string text = "HloModule m\nENTRY e {\n  lr = f32[] parameter(0)\n"
                     "  b = f32[64,128] broadcast(lr), dimensions={}\n";
  std::string outputs, shapes;
  for (int i = 0; i < 12; ++i) {
    const std::string n = std::to_string(i);
    text += "  x" + n + " = f32[64,128] parameter(" + std::to_string(i + 1) + ")\n";
    text += "  c" + n + " = f32[64,128] multiply(x" + n + ", b)\n";
    outputs += (i ? ", c" : "c") + n;
    shapes += std::string(i ? ", " : "") + "f32[64,128]";
  }
  text += "  ROOT out = (" + shapes + ") tuple(" + outputs + ")\n}\n";
  const FusionPlan& plan = Plan(text);
  for (int i = 0; i < 12; ++i) {
    const FusionEdge* edge = Edge("b", "c" + std::to_string(i));
    ASSERT_NE(edge, nullptr);
    EXPECT_TRUE(edge->fused) << edge->reason;
  }
  EXPECT_EQ(plan.root_kernel[Index("b")], -1);
}

TEST_F(PlannerTest, RefusesToRereadAnExpensiveProducerThroughABroadcast) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[512] parameter(0)
  ex = f32[512] exponential(x)
  ROOT b = f32[1024,512] broadcast(ex), dimensions={1}
})");
  const FusionEdge* edge = Edge("ex", "b");
  ASSERT_NE(edge, nullptr);
  EXPECT_FALSE(edge->fused);
  EXPECT_NE(edge->reason.find("reads each element of %ex 1024 times"), std::string::npos)
      << edge->reason;
}

TEST_F(PlannerTest, RefusesFusionThatDoesNotFitScopedVmem) {
  options_.tiling.scoped_vmem_bytes = 64 << 10;
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[1024,1024] parameter(0)
  y = f32[1024,1024] parameter(1)
  z = f32[1024,1024] parameter(2)
  a = f32[1024,1024] add(x, y)
  ROOT m = f32[1024,1024] multiply(a, z)
})");
  // Smallest blocks: 4 arrays x (8,128) f32 x 2 buffers = 32 KiB fits; the
  // fused kernel needs 3 inputs + 1 output = 32 KiB; with a 24 KiB limit:
  const FusionEdge* edge = Edge("a", "m");
  ASSERT_NE(edge, nullptr);
  EXPECT_TRUE(edge->fused) << edge->reason;

  options_.tiling.scoped_vmem_bytes = 24 << 10;
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[1024,1024] parameter(0)
  y = f32[1024,1024] parameter(1)
  z = f32[1024,1024] parameter(2)
  a = f32[1024,1024] add(x, y)
  ROOT m = f32[1024,1024] multiply(a, z)
})");
  edge = Edge("a", "m");
  ASSERT_NE(edge, nullptr);
  EXPECT_FALSE(edge->fused);
  EXPECT_EQ(edge->reason,
            "fusing %a into the kernel of %m would need 32.0 KiB of VMEM, scoped VMEM is "
            "24.0 KiB");
}

TEST_F(PlannerTest, OpaqueOpsAndSharedDotOperandsAreNotFused) {
  Plan(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[128,128] parameter(0)
  n = f32[128,128] negate(x)
  s = f32[128,128] sort(n), dimensions={1}, to_apply=lt
  ROOT d = f32[128,128] dot(n, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  const FusionEdge* into_sort = Edge("n", "s");
  ASSERT_NE(into_sort, nullptr);
  EXPECT_FALSE(into_sort->fused);
  EXPECT_EQ(into_sort->reason, "consumer %s (sort) is not fusible: it runs as its own kernel");
  const FusionEdge* into_dot = Edge("n", "d");
  ASSERT_NE(into_dot, nullptr);
  EXPECT_FALSE(into_dot->fused);
  EXPECT_EQ(into_dot->kind, DecisionKind::kProfitability);
  EXPECT_EQ(into_dot->reason,
            "producer %n has 2 consumers: computed inside %d (dot) it would still be materialized for the others");
}

// A layer's weights sliced from a stacked parameter, reshaped and converted
// to bf16 are computed as the dot loads its blocks (XLA's fusion of weight
// converts into the contraction): one kernel, prologue edges. In a scan
// body (each dot tiled alone when timed) that pays; in an entry kernel the
// dynamic slice would load the whole stack with every block, so there the
// convert stays a loop kernel.
constexpr const char* kStackedWeights = R"(
HloModule m
ENTRY e {
  x = bf16[256,512] parameter(0)
  stack = f32[4,512,256] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ws = f32[1,512,256] dynamic-slice(stack, i, z, z), dynamic_slice_sizes={1,512,256}
  wr = f32[512,256] reshape(ws)
  wc = bf16[512,256] convert(wr)
  ROOT d = bf16[256,256] dot(x, wc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST_F(PlannerTest, CheapProducersAreComputedAsTheDotLoadsItsOperands) {
  options_.contractions_run_on_plan_tiles = false;  // as in a loop body
  const FusionPlan& plan = Plan(kStackedWeights);
  for (auto [p, c] : {std::pair{"wc", "d"}, {"wr", "wc"}, {"ws", "wr"}}) {
    const FusionEdge* e = Edge(p, c);
    ASSERT_NE(e, nullptr) << p;
    EXPECT_TRUE(e->fused) << p << ": " << e->reason;
    EXPECT_EQ(e->rule, FusionRule::kPrologue) << p;
    EXPECT_EQ(e->kind, DecisionKind::kProfitability) << p;
  }
  EXPECT_EQ(Edge("wc", "d")->reason,
            "prologue fusion: %wc (convert) is computed as %d (dot) loads its operand blocks");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kOutput);
  EXPECT_EQ(plan.kernels[0].instructions.size(), 4u);
}

// Layout assignment's copy of a parameter into a convolution's feature-
// minor layout transposes memory: gathered block by block inside the
// convolution, every row block would read across the whole parameter.
TEST_F(PlannerTest, AConvolutionDoesNotTransposeItsOperandInItsPrologue) {
  options_.contractions_run_on_plan_tiles = false;
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  w = f32[32,8,1,1] parameter(1)
  t = f32[16,8,7,7]{1,0,3,2} copy(x)
  ROOT c = f32[16,32,7,7]{1,0,3,2} convolution(t, w), window={size=1x1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(Edge("t", "c"), nullptr);
  ExpectRefused("t", "c", DecisionKind::kProfitability, "changes its operand's memory order");
  EXPECT_EQ(plan.kernels.size(), 2u);
}

// The same move behind a cheap elementwise op: the cone the prologue would
// compute holds it, so the whole cone stays outside.
TEST_F(PlannerTest, AConvolutionDoesNotTransposeItsOperandDeeperInItsPrologue) {
  options_.contractions_run_on_plan_tiles = false;
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  w = f32[32,8,1,1] parameter(1)
  t = f32[16,8,7,7]{1,0,3,2} copy(x)
  n = f32[16,8,7,7]{1,0,3,2} negate(t)
  ROOT c = f32[16,32,7,7]{1,0,3,2} convolution(n, w), window={size=1x1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(Edge("n", "c"), nullptr);
  ExpectRefused("n", "c", DecisionKind::kProfitability, "%t (copy) changes its operand's memory order");
  EXPECT_EQ(plan.kernels.size(), 2u);
}

TEST_F(PlannerTest, AnEntryPrologueMustNotLoadMoreThanItSaves) {
  const FusionPlan& plan = Plan(kStackedWeights);
  const FusionEdge* e = Edge("wc", "d");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->fused);
  EXPECT_EQ(e->kind, DecisionKind::kProfitability);
  EXPECT_NE(e->reason.find("more per run"), std::string::npos) << e->reason;
  EXPECT_EQ(plan.kernels.size(), 2u);
}

// A prologue is decided whole at the operand: an f32 sum converted to bf16
// would read 4 bytes per byte of the operand, so neither joins the dot (the
// sum and convert stay one loop kernel); expensive producers, which every
// load would recompute, never join.
TEST_F(PlannerTest, ProloguesStayCheapAndWhole) {
  Plan(R"(
HloModule m
ENTRY e {
  x = bf16[256,512] parameter(0)
  a = f32[512,256] parameter(1)
  b = f32[512,256] parameter(2)
  s = f32[512,256] add(a, b)
  sc = bf16[512,256] convert(s)
  d1 = bf16[256,256] dot(x, sc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  w = bf16[512,256] parameter(3)
  ex = bf16[256,512] exponential(x)
  d2 = bf16[256,256] dot(ex, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (bf16[256,256], bf16[256,256]) tuple(d1, d2)
})");
  const FusionEdge* convert = Edge("sc", "d1");
  ASSERT_NE(convert, nullptr);
  EXPECT_FALSE(convert->fused);
  EXPECT_EQ(convert->kind, DecisionKind::kProfitability);
  EXPECT_NE(convert->reason.find("would read 4.0 bytes from HBM per byte of its operand"), std::string::npos)
      << convert->reason;
  const FusionEdge* sum = Edge("s", "sc");
  ASSERT_NE(sum, nullptr);
  EXPECT_TRUE(sum->fused) << sum->reason;
  EXPECT_EQ(sum->rule, FusionRule::kLoop);
  const FusionEdge* expensive = Edge("ex", "d2");
  ASSERT_NE(expensive, nullptr);
  EXPECT_FALSE(expensive->fused);
  EXPECT_EQ(expensive->kind, DecisionKind::kProfitability);
  EXPECT_NE(expensive->reason.find("is expensive"), std::string::npos) << expensive->reason;
}

// A cheap producer whose own producer is expensive and made for it alone
// stays in a loop kernel with it: computing it inside the dot would make
// the dot read both inputs instead of one result.
TEST_F(PlannerTest, APrologueIsRefusedWhenItsProducerCannotFollow) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[256,512] parameter(0)
  w = f32[512,256] parameter(1)
  s = f32[256,512] sine(x)
  m = f32[256,512] multiply(s, x)
  ROOT d = f32[256,256] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  const FusionEdge* into_dot = Edge("m", "d");
  ASSERT_NE(into_dot, nullptr);
  EXPECT_FALSE(into_dot->fused);
  EXPECT_EQ(into_dot->reason,
            "producer %s (sine) fuses into %m's own kernel but is not computed inside %d (dot): %m stays a loop "
            "kernel with it");
  const FusionEdge* loop = Edge("s", "m");
  ASSERT_NE(loop, nullptr);
  EXPECT_TRUE(loop->fused);
}

TEST_F(PlannerTest, NonePlanMakesEveryInstructionItsOwnKernel) {
  const FusionPlan& plan = Plan(R"(
HloModule m
ENTRY e {
  x = f32[8,128] parameter(0)
  c = f32[] constant(1.5)
  cb = f32[8,128] broadcast(c), dimensions={}
  a = f32[8,128] add(x, cb)
  ROOT n = f32[8,128] negate(a)
})",
                                PlanKind::kNone);
  ASSERT_EQ(plan.kernels.size(), 3u);  // broadcast, add, negate
  for (const Kernel& k : plan.kernels) EXPECT_EQ(k.kind, KernelKind::kSingle);
  EXPECT_EQ(KernelOf("cb").instructions, std::vector<int64_t>{Index("cb")});
  EXPECT_EQ(plan.fused_edge_count(), 0);
  EXPECT_EQ(Edge("cb", "a")->reason, "plan none: every instruction is its own kernel");
}

// Tuned plans come from the autotuner's measurements; asked for one, the
// planner refuses rather than guessing.
TEST_F(PlannerTest, TunedPlanIsRefused) {
  auto module = ParseVerified("HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT n = f32[8] negate(x)\n}\n");
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kTuned, options_);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(plan.error().message.find("plan tuned"), std::string::npos) << plan.error().message;
}

TEST_F(PlannerTest, GivenPlanKeepsXlaFusions) {
  const FusionPlan& plan = Plan(R"(
HloModule m
fused {
  p0 = f32[128] parameter(0)
  p1 = f32[128] parameter(1)
  a = f32[128] add(p0, p1)
  ROOT n = f32[128] negate(a)
}
ENTRY e {
  x = f32[128] parameter(0)
  y = f32[128] parameter(1)
  f = f32[128] fusion(x, y), kind=kLoop, calls=fused
  ROOT e2 = f32[128] exponential(f)
})",
                                PlanKind::kGiven);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(KernelOf("f").kind, KernelKind::kGiven);
  EXPECT_EQ(KernelOf("e2").kind, KernelKind::kSingle);
  EXPECT_FALSE(Edge("f", "e2")->fused);
}

TEST_F(PlannerTest, EditedPlansAreReformedAndValidated) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[64,128] parameter(0)
  a = f32[64,128] negate(x)
  ROOT b = f32[64,128] exponential(a)
})");
  ASSERT_EQ(plan_.kernels.size(), 1u);
  FusionPlan edited = plan_;
  for (FusionEdge& e : edited.edges) e.fused = false;
  // Kernels no longer match the edges until re-formed.
  EXPECT_FALSE(ValidatePlan(*module_->entry(), options_.tiling, edited).has_value());
  ASSERT_TRUE(FormKernels(*module_->entry(), options_.tiling, edited).has_value());
  EXPECT_EQ(edited.kernels.size(), 2u);
  EXPECT_TRUE(ValidatePlan(*module_->entry(), options_.tiling, edited).has_value());
  // A tampered tile is caught.
  edited.kernels[0].tile.vmem_bytes += 1;
  auto bad = ValidatePlan(*module_->entry(), options_.tiling, edited);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("kernel 0: tile says"), std::string::npos);
}

TEST_F(PlannerTest, ASiblingEdgeToAValueNoLongerWrittenMergesNothing) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[64,128] parameter(0)
  y = f32[64,128] parameter(1)
  a = f32[64,128] negate(y)
  c = f32[64,128] multiply(a, a)
  b = f32[64,128] exponential(x)
  ROOT t = (f32[64,128], f32[64,128]) tuple(c, b)
})");
  ASSERT_EQ(plan_.root_kernel[Index("a")], -1) << "the heuristic computes a in the kernel of c";
  // An edited plan (the tuner's) also merges the kernels of a and b: a is
  // not written, so the edge merges nothing and the kernels stay.
  FusionPlan edited = plan_;
  edited.edges.push_back({Index("y"), Index("a"), Index("b"), FusionRule::kMultiOutput, true, "edited",
                          DecisionKind::kProfitability});
  ASSERT_TRUE(FormKernels(*module_->entry(), options_.tiling, edited).has_value());
  EXPECT_EQ(edited.kernels, plan_.kernels);
  EXPECT_TRUE(ValidatePlan(*module_->entry(), options_.tiling, edited).has_value());
}

TEST_F(PlannerTest, FusingIntoADotIsRejectedOnEditedPlans) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  n = f32[128,128] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d = f32[128,128] dot(n, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  FusionPlan edited = plan_;
  for (FusionEdge& e : edited.edges) e.fused = true;
  auto formed = FormKernels(*module_->entry(), options_.tiling, edited);
  ASSERT_FALSE(formed.has_value());
  EXPECT_EQ(formed.error().message,
            "fused edge %n -> %d: consumer %d (dot) takes only elementwise, broadcast and data-movement "
            "producers, not %n (dot)");
}

// A cheap producer fused into both roots of a multi-output kernel, and into
// a kernel gathered between them, is listed once in each kernel.
TEST_F(PlannerTest, SharedProducerIsListedOnceInAMultiOutputKernel) {
  Plan(R"(
HloModule m
ENTRY e {
  x = f32[64,128] parameter(0)
  p = f32[64,128] negate(x)
  r1 = f32[64,128] exponential(p)
  r3 = f32[64,128] tanh(p)
  r2 = f32[64,128] sqrt(p)
  ROOT t = (f32[64,128], f32[64,128], f32[64,128]) tuple(r1, r3, r2)
})", PlanKind::kNone);
  FusionPlan edited = plan_;
  for (FusionEdge& e : edited.edges) e.fused = true;
  edited.edges.push_back(FusionEdge{Index("x"), Index("r1"), Index("r2"), FusionRule::kMultiOutput, true, "test"});
  ASSERT_TRUE(FormKernels(*module_->entry(), options_.tiling, edited).has_value());
  ASSERT_EQ(edited.kernels.size(), 2u);
  for (const Kernel& kernel : edited.kernels) {
    std::vector<int64_t> unique = kernel.instructions;
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    EXPECT_EQ(unique, kernel.instructions);
  }
  EXPECT_TRUE(ValidatePlan(*module_->entry(), options_.tiling, edited).has_value());
}

}  // namespace
}  // namespace kiln::fusion
