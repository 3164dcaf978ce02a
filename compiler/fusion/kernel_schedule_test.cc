#include "compiler/fusion/kernel_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "compiler/fusion/kernel_formation.h"
#include "compiler/fusion/op_class.h"
#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::fusion {
namespace {

using passes::testing::ParseVerified;

// Position in the plan's kernel order of the kernel whose root is `name`.
int64_t PositionOf(const hlo::Computation& computation, const FusionPlan& plan, const std::string& name) {
  for (const Kernel& kernel : plan.kernels) {
    for (int64_t r : kernel.roots) {
      if (computation.instructions()[r]->name() == name) return kernel.id;
    }
  }
  return -1;
}

// Every kernel runs after the kernels whose roots it reads.
void ExpectProducersFirst(const hlo::Computation& computation, const FusionPlan& plan) {
  for (const Kernel& kernel : plan.kernels) {
    std::vector<int64_t> sources;
    for (int64_t x : kernel.inputs) {
      CollectSourceIds(computation.instructions()[x].get(), plan.root_kernel, /*follow_control=*/true, sources);
    }
    for (int64_t s : sources) EXPECT_LT(s, kernel.id) << "kernel " << kernel.id << " reads kernel " << s;
  }
}

// A backward pass as JAX writes it: every cotangent g1..g4 (1 MiB each)
// first, then the weight gradients dw1..dw4 that read them. In program
// order all four cotangents are live at once; a memory-aware order runs
// each dwI right after gI.
constexpr const char* kCotangentsThenWeightGradients = R"(
HloModule grads
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[512,512] parameter(0)
  zero = f32[] constant(0)
  g1 = f32[512,512] negate(x)
  g2 = f32[512,512] exponential(g1)
  g3 = f32[512,512] negate(g2)
  g4 = f32[512,512] exponential(g3)
  dw1 = f32[512] reduce(g1, zero), dimensions={0}, to_apply=add
  dw2 = f32[512] reduce(g2, zero), dimensions={0}, to_apply=add
  dw3 = f32[512] reduce(g3, zero), dimensions={0}, to_apply=add
  dw4 = f32[512] reduce(g4, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[512], f32[512], f32[512], f32[512]) tuple(dw1, dw2, dw3, dw4)
})";

TEST(KernelScheduleTest, WeightGradientsRunAsSoonAsTheirCotangentsExist) {
  auto module = ParseVerified(kCotangentsThenWeightGradients);
  ASSERT_NE(module, nullptr);
  const hlo::Computation& entry = *module->entry();
  auto plan = PlanComputation(entry, PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  ExpectProducersFirst(entry, *plan);
  // dw1 runs before g3 is computed: g1 is freed before a third cotangent
  // exists.
  EXPECT_LT(PositionOf(entry, *plan, "dw1"), PositionOf(entry, *plan, "g3"));
  EXPECT_LT(PositionOf(entry, *plan, "dw2"), PositionOf(entry, *plan, "g4"));

  // The schedule says what it saved: two cotangents live at most, against
  // four in program order (plus the small gradients).
  std::vector<Kernel> kernels = plan->kernels;
  auto schedule = ScheduleKernels(entry, kernels, plan->root_kernel);
  ASSERT_TRUE(schedule.has_value()) << schedule.error().message;
  constexpr int64_t kCotangent = 1 << 20;
  EXPECT_EQ(schedule->kind, ScheduleKind::kListOrder);
  EXPECT_LT(schedule->peak_live_bytes, 2 * kCotangent + 4 * 2048 + 1);
  EXPECT_GE(schedule->program_order_live_bytes, 4 * kCotangent);
}

TEST(KernelScheduleTest, AProgramAlreadyInItsBestOrderKeepsIt) {
  auto module = ParseVerified(R"(
HloModule chain
ENTRY e {
  x = f32[256,256] parameter(0)
  a = f32[256,256] negate(x)
  b = f32[256,256] exponential(a)
  ROOT c = f32[256,256] negate(b)
})");
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  auto schedule = ScheduleKernels(*module->entry(), plan->kernels, plan->root_kernel);
  ASSERT_TRUE(schedule.has_value()) << schedule.error().message;
  EXPECT_EQ(schedule->kind, ScheduleKind::kProgramOrder);
  EXPECT_EQ(schedule->peak_live_bytes, schedule->program_order_live_bytes);
  EXPECT_EQ(schedule->order, (std::vector<int64_t>{0, 1, 2}));
}

// %big and then %ar2 free more memory than %ar1 (8 MiB that nothing frees),
// so a memory-only order would run %ar2 before %ar1. Collectives keep
// their program order: every chip of a slice must issue them alike.
TEST(KernelScheduleTest, CollectivesKeepTheirProgramOrder) {
  auto module = ParseVerified(R"(
HloModule collectives, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024,1024] parameter(0)
  q = f32[2048,1024] parameter(1)
  ar1 = f32[2048,1024] all-reduce(q), replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true, to_apply=add
  big = f32[1024,1024] exponential(p)
  ar2 = f32[1024,1024] all-reduce(big), replica_groups={{0,1}}, channel_id=2, use_global_device_ids=true, to_apply=add
  ROOT t = (f32[2048,1024], f32[1024,1024]) tuple(ar1, ar2)
})");
  ASSERT_NE(module, nullptr);
  const hlo::Computation& entry = *module->entry();
  auto plan = PlanComputation(entry, PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  ExpectProducersFirst(entry, *plan);
  EXPECT_LT(PositionOf(entry, *plan, "ar1"), PositionOf(entry, *plan, "ar2"));
}

// A step whose gradient all-reduce reads %g, written after compute (%h,
// %k) that does not feed it: the tuner asks for %g first, so the
// all-reduce can start while %h and %k run. The order asked for is made
// valid: a kernel never runs before its producers, collectives keep their
// program order, and unlisted kernels follow.
TEST(KernelScheduleTest, ReorderKernelsRunsThePreferredValidOrder) {
  auto module = ParseVerified(R"(
HloModule step, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  h = f32[256,256] exponential(y)
  k = f32[256,256] negate(h)
  g = f32[256,256] exponential(x)
  ar1 = f32[256,256] all-reduce(g), replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true, to_apply=add
  ar2 = f32[256,256] all-reduce(k), replica_groups={{0,1}}, channel_id=2, use_global_device_ids=true, to_apply=add
  ROOT t = (f32[256,256], f32[256,256]) tuple(ar1, ar2)
})");
  ASSERT_NE(module, nullptr);
  const hlo::Computation& entry = *module->entry();
  auto plan = PlanComputation(entry, PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  auto kernel_of = [&](const std::string& name) {
    return plan->kernels[PositionOf(entry, *plan, name)].instructions;
  };
  ASSERT_LT(PositionOf(entry, *plan, "h"), PositionOf(entry, *plan, "g"));

  // ar2 asked before its producer k and before ar1: each waits for what it must.
  FusionPlan reordered = *plan;
  Status done = ReorderKernels(entry, {kernel_of("ar2"), kernel_of("g"), kernel_of("ar1")}, reordered);
  ASSERT_TRUE(done.has_value()) << done.error().message;
  ExpectProducersFirst(entry, reordered);
  EXPECT_EQ(PositionOf(entry, reordered, "g"), 0);
  EXPECT_EQ(PositionOf(entry, reordered, "ar1"), 1);
  EXPECT_LT(PositionOf(entry, reordered, "ar1"), PositionOf(entry, reordered, "h"));
  EXPECT_LT(PositionOf(entry, reordered, "ar1"), PositionOf(entry, reordered, "ar2"));
  EXPECT_LT(PositionOf(entry, reordered, "k"), PositionOf(entry, reordered, "ar2"));
  ASSERT_EQ(reordered.kernels.size(), plan->kernels.size());
  for (size_t k = 0; k < reordered.kernels.size(); ++k) {
    EXPECT_EQ(reordered.kernels[k].id, static_cast<int64_t>(k));
    for (int64_t r : reordered.kernels[k].roots) EXPECT_EQ(reordered.root_kernel[r], static_cast<int64_t>(k));
  }

  // What any order keeps: the all-reduces chained, each after its operand.
  auto graph = KernelDependencies(entry, plan->kernels, plan->root_kernel);
  ASSERT_TRUE(graph.has_value()) << graph.error().message;
  const std::vector<int64_t>& ar2_before = graph->before[PositionOf(entry, *plan, "ar2")];
  EXPECT_NE(std::find(ar2_before.begin(), ar2_before.end(), PositionOf(entry, *plan, "ar1")), ar2_before.end());
  EXPECT_NE(std::find(ar2_before.begin(), ar2_before.end(), PositionOf(entry, *plan, "k")), ar2_before.end());
  // ... and what they keep live: %g (256 KiB) read by ar1, ar1 returned.
  for (int64_t i = 0; i < entry.instruction_count(); ++i) {
    const std::string_view name = entry.instructions()[i]->name();
    if (name == "g") {
      EXPECT_EQ(graph->bytes[i], 256.0 * 256 * 4);
      EXPECT_FALSE(graph->returned[i]);
      const std::vector<int64_t>& reads = graph->reads[PositionOf(entry, *plan, "ar1")];
      EXPECT_NE(std::find(reads.begin(), reads.end(), i), reads.end());
    }
    if (name == "ar1") EXPECT_TRUE(graph->returned[i]);
  }

  // A kernel the plan does not have, or one listed twice: an error, the plan unchanged.
  FusionPlan untouched = *plan;
  Status unknown = ReorderKernels(entry, {{12345}}, untouched);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("no such kernel"), std::string::npos) << unknown.error().message;
  Status twice = ReorderKernels(entry, {kernel_of("g"), kernel_of("g")}, untouched);
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message.find("listed twice"), std::string::npos) << twice.error().message;
  EXPECT_EQ(untouched, *plan);
}

TEST(KernelScheduleTest, ACycleNamesAKernelOnIt) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] negate(x)
  ROOT b = f32[8] exponential(a)
})");
  ASSERT_NE(module, nullptr);
  const hlo::Computation& entry = *module->entry();
  auto plan = PlanComputation(entry, PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  // Make %a's kernel also read %b: the two kernels wait on each other.
  std::vector<Kernel> kernels = plan->kernels;
  const int64_t b = kernels[1].roots.front();
  kernels[0].inputs.push_back(b);
  auto schedule = ScheduleKernels(entry, kernels, plan->root_kernel);
  ASSERT_FALSE(schedule.has_value());
  EXPECT_NE(schedule.error().message.find("cycle through the kernel of %"), std::string::npos)
      << schedule.error().message;
}

}  // namespace
}  // namespace kiln::fusion
