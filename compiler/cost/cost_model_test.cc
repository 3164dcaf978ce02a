#include "compiler/cost/cost_model.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::cost {
namespace {

using fusion::PlanComputation;
using fusion::PlanKind;
using fusion::PlannerOptions;
using passes::testing::ParseVerified;

const runtime::ChipSpec& V5e() { return *runtime::FindChip("v5e"); }

std::string Dot(std::string_view type, std::string_view precision) {
  return "HloModule m\nENTRY e {\n  x = " + std::string(type) + "[2048,2048] parameter(0)\n" +
         "  w = " + std::string(type) + "[2048,2048] parameter(1)\n" +
         "  ROOT d = " + std::string(type) +
         "[2048,2048] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}" +
         std::string(precision) + "\n}\n";
}

KernelCost OnlyKernelCost(const hlo::Module& module) {
  auto plan = PlanComputation(*module.entry(), PlanKind::kHeuristic, PlannerOptions{});
  EXPECT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kernels.size(), 1u);
  return EstimateKernel(*module.entry(), plan->kernels[0], V5e());
}

TEST(CostModelTest, DotIsComputeBoundAtThePrecisionRate) {
  auto bf16 = ParseVerified(Dot("bf16", ""));
  auto f32_default = ParseVerified(Dot("f32", ""));
  auto f32_highest = ParseVerified(Dot("f32", ", operand_precision={highest,highest}"));
  ASSERT_TRUE(bf16 && f32_default && f32_highest);
  KernelCost a = OnlyKernelCost(*bf16);
  KernelCost b = OnlyKernelCost(*f32_default);
  KernelCost c = OnlyKernelCost(*f32_highest);
  double flops = 2.0 * 2048 * 2048 * 2048;
  EXPECT_DOUBLE_EQ(a.mxu_flops, flops);
  double mxu_seconds = flops / V5e().bf16_flops;
  EXPECT_GE(a.seconds, mxu_seconds);
  EXPECT_LT(a.seconds, mxu_seconds * 1.5);
  // f32 at DEFAULT precision runs at the bf16 rate; HIGHEST takes 6 passes.
  EXPECT_GE(b.seconds, mxu_seconds);
  EXPECT_LT(b.seconds, mxu_seconds * 1.5);
  EXPECT_GT(c.seconds, 5.5 * mxu_seconds);
}

TEST(CostModelTest, NarrowDotsRunAtTheRateTheirTypesGetOnTheChip) {
  // v5e's MXU doubles its rate for int8 but widens fp8 to bf16, as the
  // timing simulator (runtime/chip/op_kinds.h) counts them.
  auto s8 = ParseVerified(Dot("s8", ""));
  auto f8 = ParseVerified(Dot("f8e4m3fn", ""));
  ASSERT_TRUE(s8 && f8);
  const double flops = 2.0 * 2048 * 2048 * 2048;
  KernelCost a = OnlyKernelCost(*s8);
  KernelCost b = OnlyKernelCost(*f8);
  EXPECT_GE(a.seconds, flops / V5e().int8_ops);
  EXPECT_LT(a.seconds, 1.5 * flops / V5e().int8_ops);
  EXPECT_GE(b.seconds, flops / V5e().bf16_flops);
  EXPECT_LT(b.seconds, 1.5 * flops / V5e().bf16_flops);
}

TEST(CostModelTest, ElementwiseIsBandwidthBound) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[4096,4096] parameter(0)
  y = f32[4096,4096] parameter(1)
  ROOT a = f32[4096,4096] add(x, y)
})");
  ASSERT_NE(module, nullptr);
  KernelCost cost = OnlyKernelCost(*module);
  double bytes = 3.0 * 4096 * 4096 * 4;
  EXPECT_DOUBLE_EQ(cost.hbm_bytes, bytes);
  double memory = bytes / V5e().hbm_bytes_per_s;
  EXPECT_GT(cost.seconds, memory + V5e().launch_overhead_s);
  EXPECT_LT(cost.seconds, memory * 1.2 + V5e().launch_overhead_s);
}

TEST(CostModelTest, FusionSavesTheIntermediateTraffic) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[2048,2048] parameter(0)
  a = f32[2048,2048] negate(x)
  b = f32[2048,2048] exponential(a)
  ROOT c = f32[2048,2048] negate(b)
})");
  ASSERT_NE(module, nullptr);
  auto fused = PlanComputation(*module->entry(), PlanKind::kHeuristic, PlannerOptions{});
  auto unfused = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(fused && unfused);
  PlanCost f = EstimatePlan(*module->entry(), *fused, V5e());
  PlanCost u = EstimatePlan(*module->entry(), *unfused, V5e());
  EXPECT_EQ(f.kernels.size(), 1u);
  EXPECT_EQ(u.kernels.size(), 3u);
  EXPECT_LT(f.seconds * 2.5, u.seconds);
}

TEST(CostModelTest, WhileCostsItsBodyTimesTheKnownTripCount) {
  std::string text = R"(
HloModule m
cond {
  p = (s32[], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x = f32[1024,1024] get-tuple-element(p), index=1
  y = f32[1024,1024] exponential(x)
  ROOT t = (s32[], f32[1024,1024]) tuple(i2, y)
}
ENTRY e {
  x = f32[1024,1024] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024,1024]) tuple(zero, x)
  ROOT w = (s32[], f32[1024,1024]) while(init), condition=cond, body=body$CONFIG
})";
  auto with = [&](std::string config) {
    std::string t = text;
    t.replace(t.find("$CONFIG"), 7, config);
    return t;
  };
  auto once = ParseVerified(with(""));
  auto ten = ParseVerified(with(R"(, backend_config={"known_trip_count":{"n":"10"}})"));
  ASSERT_TRUE(once && ten);
  double a = OnlyKernelCost(*once).seconds;
  double b = OnlyKernelCost(*ten).seconds;
  EXPECT_GT(b, 8 * a);
  EXPECT_LT(b, 11 * a);
}

}  // namespace
}  // namespace kiln::cost
