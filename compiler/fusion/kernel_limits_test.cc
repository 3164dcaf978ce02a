// How large the heuristic lets a kernel grow: how often a cheap producer is
// copied into the kernels that read it (PlannerOptions::max_duplication),
// and how many arrays one kernel reads (max_kernel_inputs).
#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using testing::PlannerTest;

// c = op(x) read by ten loop kernels k0..k9 (each adds a parameter), all
// returned; x is of `type`, c is f32.
std::string TenReaders(const std::string& op, const std::string& type) {
  std::string text = "HloModule m\nENTRY e {\n  x = " + type + "[64,128] parameter(0)\n";
  std::string tuple_shape, tuple_args;
  for (int i = 0; i < 10; ++i) {
    const std::string k = std::to_string(i);
    text += "  p" + k + " = f32[64,128] parameter(" + std::to_string(i + 1) + ")\n";
    tuple_shape += std::string(i ? ", " : "") + "f32[64,128]";
    tuple_args += std::string(i ? ", " : "") + "k" + k;
  }
  text += "  c = f32[64,128] " + op + "(x)\n";
  for (int i = 0; i < 10; ++i) {
    const std::string k = std::to_string(i);
    text += "  k" + k + " = f32[64,128] add(c, p" + k + ")\n";
  }
  return text + "  ROOT t = (" + tuple_shape + ") tuple(" + tuple_args + ")\n}\n";
}

// A negate read by ten kernels is more copies than the limit: it is
// written once and read back by each.
TEST_F(PlannerTest, AProducerWithMoreReadersThanTheLimitIsWrittenOnce) {
  Plan(TenReaders("negate", "f32"));
  for (int i = 0; i < 10; ++i) {
    ExpectRefused("c", "k" + std::to_string(i), DecisionKind::kProfitability,
                  "producer %c has 10 consumers: copying it into each kernel would bloat them (limit 8)");
  }
}

// A bf16 -> f32 convert is cheaper to recompute in every reader (each loads
// the bf16 source) than to write in f32 and read back: no limit.
TEST_F(PlannerTest, AWideningConvertIsRecomputedInEveryReader) {
  Plan(TenReaders("convert", "bf16"));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(Edge("c", "k" + std::to_string(i))->fused) << i;
}

// A chain of adds over 20 pairwise sums: each sum fused into the chain's
// kernel replaces one array it reads with two, until 32.
TEST_F(PlannerTest, AKernelReadsAtMostMaxKernelInputsArrays) {
  std::string text = "HloModule m\nENTRY e {\n";
  for (int i = 0; i < 20; ++i) {
    const std::string k = std::to_string(i);
    text += "  p" + k + " = f32[64,128] parameter(" + std::to_string(2 * i) + ")\n";
    text += "  q" + k + " = f32[64,128] parameter(" + std::to_string(2 * i + 1) + ")\n";
    text += "  t" + k + " = f32[64,128] add(p" + k + ", q" + k + ")\n";
  }
  text += "  s1 = f32[64,128] add(t0, t1)\n";
  for (int i = 2; i < 20; ++i) {
    text += "  s" + std::to_string(i) + " = f32[64,128] add(s" + std::to_string(i - 1) + ", t" + std::to_string(i) + ")\n";
  }
  const FusionPlan& plan = Plan(text + "  ROOT r = f32[64,128] negate(s19)\n}\n");
  int refused = 0;
  for (int i = 0; i < 20; ++i) {
    const FusionEdge* e = Edge("t" + std::to_string(i), i < 2 ? "s1" : "s" + std::to_string(i));
    if (e->fused) continue;
    ++refused;
    EXPECT_NE(e->reason.find("read 33 arrays (limit 32)"), std::string::npos) << e->reason;
  }
  EXPECT_GT(refused, 0);
  for (const Kernel& k : plan.kernels) EXPECT_LE(k.inputs.size(), 32u);
}

// A concatenate of 40 reshaped gradients reads 40 arrays however it is
// fused: reshapes that add none are fused even past the limit.
TEST_F(PlannerTest, ProducersThatAddNoArraysJoinAKernelPastTheLimit) {
  std::string text = "HloModule m\nENTRY e {\n";
  std::string parts;
  for (int i = 0; i < 40; ++i) {
    const std::string k = std::to_string(i);
    text += "  g" + k + " = f32[8,128] parameter(" + k + ")\n";
    text += "  r" + k + " = f32[1024] reshape(g" + k + ")\n";
    parts += std::string(i ? ", " : "") + "r" + k;
  }
  const FusionPlan& plan = Plan(text + "  ROOT flat = f32[40960] concatenate(" + parts + "), dimensions={0}\n}\n");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].inputs.size(), 40u);
}

}  // namespace
}  // namespace kiln::fusion
