// The tuner's schedule search (compiler/autotune/schedule_search.h) on the
// simulator: a data-parallel step whose gradient all-reduce is written
// after compute that does not feed it waits for that compute in program
// order; the tuner runs the gradient first so the all-reduce moves while
// the rest computes, and the tuned program keeps every kernel's values
// (the same dataflow as the heuristic's).
#include <gtest/gtest.h>

#include <string_view>

#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/format/program.h"
#include "server/service/tune_runner.h"

namespace kiln::service {
namespace {

// Per chip of a 4-chip slice: the activations' chain (%h1..%h3) is written
// first, the weight gradient %g and its all-reduce last.
constexpr std::string_view kDataParallelStep = R"(HloModule dp_step, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,1024] parameter(0)
  w = f32[1024,1024] parameter(1)
  h1 = f32[1024,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t1 = f32[1024,1024] tanh(h1)
  h2 = f32[1024,1024] dot(t1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t2 = f32[1024,1024] tanh(h2)
  h3 = f32[1024,1024] dot(t2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[1024,1024] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ar = f32[1024,1024] all-reduce(g), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
  ROOT out = (f32[1024,1024], f32[1024,1024]) tuple(h3, ar)
})";

Result<autotune::TuneResult> TuneStep(autotune::Runner& runner, int64_t trials) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, hlo::ParseModule(kDataParallelStep, "dp_step"));
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module));
  driver::CompileOptions options;
  options.topology = "2x2";
  autotune::TuneOptions tune;
  tune.max_trials = trials;
  return autotune::Tune(*module, options, runner, nullptr, tune);
}

// Position of the kernel named `name` in an executable's order.
int64_t PositionIn(const std::vector<uint8_t>& executable, std::string_view name) {
  Result<runtime::Program> program = runtime::ParseProgram(executable);
  if (!program) return -1;
  for (size_t k = 0; k < program->kernels.size(); ++k) {
    if (program->kernels[k].name == name) return static_cast<int64_t>(k);
  }
  return -1;
}

TEST(ScheduleTuningTest, TheGradientAllReduceIsStartedBeforeTheComputeThatDoesNotFeedIt) {
  SimulatedRunner runner(*runtime::FindChip("v5e"));
  Result<autotune::TuneResult> result = TuneStep(runner, 12);
  ASSERT_TRUE(result) << result.error().ToString();
  ASSERT_TRUE(result->accepted) << result->decision << " / " << result->schedule_note;
  EXPECT_GT(result->exposed_ici_us, 0);
  EXPECT_GT(result->schedule_orders_measured, 0);
  EXPECT_FALSE(result->schedule_order.empty()) << result->schedule_note;
  EXPECT_FALSE(result->edits.kernel_order.empty());
  EXPECT_GT(result->schedule_gain_us, 0);
  EXPECT_LT(result->tuned_us, result->heuristic_us);
  EXPECT_NEAR(result->schedule_gain_us + result->tiling_gain_us + result->fusion_gain_us + result->body_gain_us,
              result->heuristic_us - result->tuned_us, 1e-6);

  // The heuristic runs the gradient after the activations; the tuned
  // program starts the all-reduce before the last of them.
  const int64_t heuristic_ar = PositionIn(result->heuristic_executable, "ar");
  const int64_t tuned_ar = PositionIn(result->tuned_executable, "ar");
  const int64_t tuned_h3 = PositionIn(result->tuned_executable, "h3");
  ASSERT_GE(heuristic_ar, 0);
  ASSERT_GE(tuned_ar, 0);
  ASSERT_GE(tuned_h3, 0);
  EXPECT_LT(tuned_ar, heuristic_ar);
  EXPECT_LT(tuned_ar, tuned_h3);
  // The order was accepted on the same kernels reading the same values as
  // the plan it reorders.
  EXPECT_NE(result->decision.find("dataflow the same"), std::string::npos) << result->decision;

  // The same trials give the same order.
  SimulatedRunner again(*runtime::FindChip("v5e"));
  Result<autotune::TuneResult> second = TuneStep(again, 12);
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ(second->edits, result->edits);
  EXPECT_EQ(second->tuned_us, result->tuned_us);
}

}  // namespace
}  // namespace kiln::service
