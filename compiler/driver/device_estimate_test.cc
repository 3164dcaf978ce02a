#include "compiler/driver/device_estimate.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/passes/pass_test_util.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::driver {
namespace {

using passes::testing::ParseVerified;

// A reduction fed by a dot: the cost model and the simulator price it
// differently, so the test tells which one the compile answers.
constexpr std::string_view kDotReduceModule = R"(HloModule estimate
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[512,1024] parameter(0)
  w = f32[1024,256] parameter(1)
  d = f32[512,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[512,256] tanh(d)
  z = f32[] constant(0)
  ROOT r = f32[512] reduce(t, z), dimensions={1}, to_apply=add
})";

// A loop whose trip count is the parameter's value: no static timing.
constexpr std::string_view kDataTripLoop = R"(HloModule data_loop
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(next, n)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT out = s32[] get-tuple-element(w), index=0
})";

TEST(DeviceEstimateTest, ACompileAnswersTheDeviceTimeARunReports) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kDotReduceModule);
  Result<CompileOutput> out = CompileModule(*module, CompileOptions{});
  ASSERT_TRUE(out) << out.error().ToString();
  EXPECT_EQ(out->estimate_source, "simulator") << out->estimate_note;

  Result<std::unique_ptr<runtime::LoadedProgram>> loaded = runtime::LoadedProgram::FromBytes(out->executable);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  Result<runtime::timing::DeviceProfile> run =
      runtime::timing::SimulateProgram(**loaded, *runtime::FindChip("v5e"));
  ASSERT_TRUE(run) << run.error().ToString();
  EXPECT_DOUBLE_EQ(out->estimated_us, run->seconds * 1e6);
  EXPECT_GT(out->cost_model_us, 0);
  EXPECT_NE(out->estimated_us, out->cost_model_us) << "the two models agree here: the test cannot tell them apart";
  EXPECT_GE(out->compile_ms, out->estimate_ms);
}

TEST(DeviceEstimateTest, DataDependentTripsKeepTheCostModelAndSayWhy) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kDataTripLoop);
  Result<CompileOutput> out = CompileModule(*module, CompileOptions{});
  ASSERT_TRUE(out) << out.error().ToString();
  EXPECT_EQ(out->estimate_source, "cost_model");
  EXPECT_EQ(out->estimated_us, out->cost_model_us);
  EXPECT_NE(out->estimate_note.find("depends on data"), std::string::npos) << out->estimate_note;
}

}  // namespace
}  // namespace kiln::driver
