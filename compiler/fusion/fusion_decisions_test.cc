// Each fusion decision says whether it is a legality refusal or a
// profitability choice (DecisionKind), under every plan, and NameDecisions
// names its instructions.
#include "compiler/fusion/fusion_decisions.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::fusion {
namespace {

using passes::testing::ParseVerified;

// n -> d: a kernel holds one dot, so a dot is not computed as another's
// operand (legality); d -> a: the dot has two consumers and would be
// recomputed (profitability); a -> e: loop fusion.
constexpr const char* kMixed = R"(
HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  w = f32[128,128] parameter(1)
  n = f32[128,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d = f32[128,128] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[128,128] add(d, x)
  s = f32[128,128] subtract(d, x)
  e = f32[128,128] exponential(a)
  ROOT t = (f32[128,128], f32[128,128]) tuple(e, s)
})";

class FusionDecisionsTest : public ::testing::Test {
 protected:
  std::vector<FusionDecision> Decide(std::string_view text, PlanKind kind = PlanKind::kHeuristic) {
    module_ = ParseVerified(text);
    EXPECT_NE(module_, nullptr);
    if (module_ == nullptr) return {};
    auto plan = PlanComputation(*module_->entry(), kind, options_);
    EXPECT_TRUE(plan.has_value()) << (plan ? "" : plan.error().message);
    if (!plan) return {};
    return NameDecisions(*module_->entry(), plan->edges);
  }
  static const FusionDecision* Find(const std::vector<FusionDecision>& decisions,
                                    std::string_view producer, std::string_view consumer) {
    for (const FusionDecision& d : decisions) {
      if (d.sibling.empty() && d.producer == producer && d.consumer == consumer) return &d;
    }
    ADD_FAILURE() << "no decision " << producer << " -> " << consumer;
    return nullptr;
  }
  // The answer points into `decisions`: a temporary would leave it dangling.
  static const FusionDecision* Find(std::vector<FusionDecision>&&, std::string_view, std::string_view) = delete;

  PlannerOptions options_;
  std::unique_ptr<hlo::Module> module_;
};

TEST_F(FusionDecisionsTest, HeuristicClassifiesFusedLegalityAndProfitabilityEdges) {
  std::vector<FusionDecision> decisions = Decide(kMixed);
  const FusionDecision* fused = Find(decisions, "a", "e");
  ASSERT_NE(fused, nullptr);
  EXPECT_TRUE(fused->fused);
  EXPECT_EQ(fused->kind, DecisionKind::kProfitability);
  EXPECT_EQ(fused->rule, FusionRule::kLoop);
  EXPECT_EQ(fused->reason, "loop fusion: %a (add) into %e (exponential)");

  const FusionDecision* illegal = Find(decisions, "n", "d");
  ASSERT_NE(illegal, nullptr);
  EXPECT_FALSE(illegal->fused);
  EXPECT_EQ(illegal->kind, DecisionKind::kLegality);
  EXPECT_NE(illegal->reason.find("a kernel holds one MXU operation"), std::string::npos)
      << illegal->reason;

  const FusionDecision* unprofitable = Find(decisions, "d", "a");
  ASSERT_NE(unprofitable, nullptr);
  EXPECT_FALSE(unprofitable->fused);
  EXPECT_EQ(unprofitable->kind, DecisionKind::kProfitability);
  EXPECT_EQ(unprofitable->reason,
            "producer %d is expensive and has 2 consumers: fusing would recompute it");
}

TEST_F(FusionDecisionsTest, KernelLimitsAreProfitabilityAndVmemIsLegality) {
  constexpr const char* kChain = R"(
HloModule m
ENTRY e {
  x = f32[1024,1024] parameter(0)
  y = f32[1024,1024] parameter(1)
  z = f32[1024,1024] parameter(2)
  a = f32[1024,1024] add(x, y)
  ROOT m = f32[1024,1024] multiply(a, z)
})";
  options_.max_kernel_instructions = 1;
  const std::vector<FusionDecision> limited_decisions = Decide(kChain);
  const FusionDecision* limited = Find(limited_decisions, "a", "m");
  ASSERT_NE(limited, nullptr);
  EXPECT_FALSE(limited->fused);
  EXPECT_EQ(limited->kind, DecisionKind::kProfitability) << limited->reason;
  EXPECT_NE(limited->reason.find("instructions (limit 1)"), std::string::npos) << limited->reason;

  options_ = PlannerOptions{};
  options_.tiling.scoped_vmem_bytes = 24 << 10;  // the fused kernel needs 32 KiB
  const std::vector<FusionDecision> vmem_decisions = Decide(kChain);
  const FusionDecision* too_big = Find(vmem_decisions, "a", "m");
  ASSERT_NE(too_big, nullptr);
  EXPECT_FALSE(too_big->fused);
  EXPECT_EQ(too_big->kind, DecisionKind::kLegality) << too_big->reason;
}

TEST_F(FusionDecisionsTest, SiblingsOfDifferentShapesAreALegalityRefusal) {
  std::vector<FusionDecision> decisions = Decide(R"(
HloModule m
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[128,128] parameter(0)
  n = f32[128,128] negate(x)
  zero = f32[] constant(0)
  r = f32[128] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[128,128], f32[128]) tuple(n, r)
})");
  const FusionDecision* sibling = nullptr;
  for (const FusionDecision& d : decisions) {
    if (!d.sibling.empty()) sibling = &d;
  }
  ASSERT_NE(sibling, nullptr);
  EXPECT_EQ(sibling->producer, "x");
  EXPECT_EQ(sibling->rule, FusionRule::kMultiOutput);
  // n iterates over [128,128], r over its operand's [128,128] too: they merge.
  EXPECT_TRUE(sibling->fused) << sibling->reason;
  EXPECT_EQ(sibling->kind, DecisionKind::kProfitability);

  decisions = Decide(R"(
HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  n = f32[128,128] negate(x)
  b = f32[128,128,2] broadcast(x), dimensions={0,1}
  c = f32[128,128,2] cosine(b)
  ROOT t = (f32[128,128], f32[128,128,2]) tuple(n, c)
})");
  sibling = nullptr;
  for (const FusionDecision& d : decisions) {
    if (!d.sibling.empty()) sibling = &d;
  }
  ASSERT_NE(sibling, nullptr);
  EXPECT_FALSE(sibling->fused);
  EXPECT_EQ(sibling->kind, DecisionKind::kLegality) << sibling->reason;
  EXPECT_NE(sibling->reason.find("iterate over different shapes"), std::string::npos)
      << sibling->reason;
}

TEST_F(FusionDecisionsTest, NonePlanRefusalsAreLegalityOnlyWhereOpClassesForbidFusion) {
  std::vector<FusionDecision> decisions = Decide(kMixed, PlanKind::kNone);
  for (const FusionDecision& d : decisions) EXPECT_FALSE(d.fused) << d.producer;
  const FusionDecision* legal = Find(decisions, "a", "e");
  ASSERT_NE(legal, nullptr);
  EXPECT_EQ(legal->kind, DecisionKind::kProfitability);
  EXPECT_EQ(legal->reason, "plan none: every instruction is its own kernel");
  const FusionDecision* illegal = Find(decisions, "n", "d");
  ASSERT_NE(illegal, nullptr);
  EXPECT_EQ(illegal->kind, DecisionKind::kLegality);
  EXPECT_NE(illegal->reason.find("a kernel holds one MXU operation"), std::string::npos)
      << illegal->reason;
}

TEST_F(FusionDecisionsTest, EdgesOutsideTheComputationAreNamedByIndex) {
  module_ = ParseVerified(kMixed);
  ASSERT_NE(module_, nullptr);
  FusionEdge edge;
  edge.producer = 2;
  edge.consumer = 99;
  std::vector<FusionDecision> named = NameDecisions(*module_->entry(), {edge});
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].producer, "n");
  EXPECT_EQ(named[0].consumer, "#99");
  EXPECT_TRUE(named[0].sibling.empty());
}

}  // namespace
}  // namespace kiln::fusion
