#include "server/service/tune_runner.h"

#include <gtest/gtest.h>

#include "compiler/driver/compile_module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::service {
namespace {

constexpr std::string_view kTwoKernels = R"(HloModule two
ENTRY e {
  x = f32[64,256] parameter(0)
  w = f32[256,128] parameter(1)
  s = f32[64,256] sine(x)
  d = f32[64,128] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[64,128] logistic(d)
})";

std::vector<uint8_t> Compile(int64_t* kernels) {
  auto module = hlo::ParseModule(kTwoKernels, "two");
  EXPECT_TRUE(module && hlo::VerifyModule(**module));
  driver::CompileOptions options;
  auto out = driver::CompileModule(**module, options);
  EXPECT_TRUE(out) << out.error().ToString();
  *kernels = out->kernels;
  return out->executable;
}

TEST(SimulatedRunnerTest, TheHookRunsBeforeEveryKernelAndItsErrorStopsTheWork) {
  int64_t kernels = 0;
  const std::vector<uint8_t> executable = Compile(&kernels);
  ASSERT_GE(kernels, 1);
  SimulatedRunner runner(*runtime::FindChip("v5e"));
  int calls = 0;
  runner.set_before_kernel([&calls] {
    ++calls;
    return Ok();
  });
  auto measured = runner.Measure(executable, /*strict_tiling=*/false);
  ASSERT_TRUE(measured) << measured.error().ToString();
  EXPECT_EQ(calls, static_cast<int>(measured->kernels.size()));
  calls = 0;
  ASSERT_TRUE(runner.SetReference(executable, 7));
  EXPECT_EQ(calls, static_cast<int>(measured->kernels.size())) << "the evaluation asks too";

  calls = 0;
  runner.set_before_kernel([&calls]() -> Status {
    ++calls;
    return CancelledError("tuning cancelled");
  });
  auto stopped = runner.Measure(executable, /*strict_tiling=*/true);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(calls, 1) << "no kernel is timed after the hook refuses";
  Status reference = runner.SetReference(executable, 7);
  ASSERT_FALSE(reference);
  EXPECT_EQ(reference.error().code, ErrorCode::kCancelled);
}

}  // namespace
}  // namespace kiln::service
