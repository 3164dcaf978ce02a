// The timing model's walk over control flow on kernels nested to the
// parser's limit (while bodies, conditional branches, calls, fusions and
// reduce/sort/map callbacks), on a thread with a small stack, and on a
// kernel whose call paths multiply (an error, not a walk of 2^39 paths).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/deep_modules_test_util.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timed_execution.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

using hlo::testing::kCheckedStackBytes;
using hlo::testing::Nesting;
using hlo::testing::RunWithStack;

// A program of one kernel whose HLO is `hlo`, from f32[8] to `result`.
std::unique_ptr<LoadedProgram> OneKernel(const std::string& hlo, const std::string& result) {
  testing::ProgramBuilder b;
  uint32_t x = b.Parameter("f32[8]");
  uint32_t r = b.Kernel("deep", "control", hlo, {x}, {result})[0];
  auto loaded = b.Load(r);
  EXPECT_TRUE(loaded) << loaded.error().message;
  return loaded ? std::move(*loaded) : nullptr;
}

TEST(DeepControlFlowTimingTest, KernelsNestedToTheLimitAreTimedWithAndWithoutValues) {
  const ChipSpec& chip = *FindChip("v5e");
  for (Nesting kind : hlo::testing::kAllNestings) {
    SCOPED_TRACE(hlo::testing::NestingName(kind));
    const std::string result = kind == Nesting::kReduce ? "f32[]" : "f32[8]";
    std::unique_ptr<LoadedProgram> program =
        OneKernel(hlo::testing::NestedModule(kind, hlo::kMaxCallNesting), result);
    ASSERT_NE(program, nullptr);
    RunWithStack(kCheckedStackBytes, [&] {
      Result<DeviceProfile> timing_only = SimulateProgram(*program, chip);
      ASSERT_TRUE(timing_only) << timing_only.error().message;
      auto timer = ProgramTimer::Create(*program, chip);
      ASSERT_TRUE(timer) << timer.error().message;
      std::vector<hlo::Literal> args;
      args.push_back(hlo::Literal::Uninitialized(hlo::Shape(hlo::PrimitiveType::kF32, {8})));
      for (int64_t i = 0; i < 8; ++i) args[0].Set<float>(i, static_cast<float>(i));
      Result<TimedExecution> run = ExecuteTimed(*program, **timer, args);
      ASSERT_TRUE(run) << run.error().message;
      ASSERT_TRUE(run->profile) << run->profile.error().message;
      // Every loop runs once and every branch is known statically, so the
      // run and the static walk price the same work.
      ASSERT_EQ(run->profile->kernels.size(), 1u);
      EXPECT_DOUBLE_EQ(run->profile->kernels[0].seconds, timing_only->kernels[0].seconds);
      EXPECT_GT(timing_only->kernels[0].seconds, 0);
    });
  }
}

TEST(DeepControlFlowTimingTest, CallPathsThatMultiplyEndTheWalkWithAnError) {
  // 40 levels, each calling the one below twice: 2^38 paths to c0.
  std::unique_ptr<LoadedProgram> program = OneKernel(hlo::testing::FanOutCallModule(40, 2), "f32[8]");
  ASSERT_NE(program, nullptr);
  RunWithStack(kCheckedStackBytes, [&] {
    Result<DeviceProfile> profile = SimulateProgram(*program, *FindChip("v5e"));
    ASSERT_FALSE(profile);
    EXPECT_NE(profile.error().message.find("the kernel's calls expand to more than 16777216 instructions"),
              std::string::npos)
        << profile.error().message;
  });
}

}  // namespace
}  // namespace kiln::runtime::timing
