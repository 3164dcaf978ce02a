// End-to-end tests of `kiln run` on window ops and loops: a loop kernel
// names the steps its time goes to.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/kiln_run_fixture.h"

namespace kiln::testing {
namespace {

const nlohmann::json* KernelNamed(const nlohmann::json& kernels, const std::string& name) {
  for (const auto& k : kernels) {
    if (k["name"] == name) return &k;
  }
  return nullptr;
}

constexpr const char* kScanModule = R"(HloModule scan
body {
  p = (s32[], f32[256,512], f32[512,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[256,512] get-tuple-element(p), index=1
  w = f32[512,512] get-tuple-element(p), index=2
  d = f32[256,512] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[256,512] tanh(d)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[256,512], f32[512,512]) tuple(j, t, w)
}
cond {
  p = (s32[], f32[256,512], f32[512,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[256,512] parameter(0)
  w = f32[512,512] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[256,512], f32[512,512]) tuple(zero, x, w)
  loop = (s32[], f32[256,512], f32[512,512]) while(init), condition=cond, body=body
  ROOT h = f32[256,512] get-tuple-element(loop), index=1
}
)";

// A while loop is one kernel whose body runs step by step: --json lists
// each step with its runs, time and bytes, and the table shows the longest.
TEST_F(KilnRunTest, LoopKernelsNameTheStepsTheirTimeGoesTo) {
  const std::string module = Write("scan.hlo", kScanModule);
  RunResult r = Run(module + " --timing-only --json --chip v5e");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  const nlohmann::json* loop = KernelNamed(json["kernels"], "loop");
  ASSERT_NE(loop, nullptr) << json["kernels"];
  ASSERT_TRUE(loop->contains("steps")) << *loop;
  const auto& steps = (*loop)["steps"];
  ASSERT_FALSE(steps.empty());
  double step_us = 0;
  bool dot_step = false;
  for (const auto& s : steps) {
    EXPECT_GT(s["us"].get<double>(), 0) << s;
    step_us += s["us"].get<double>();
    // The body's dot with its tanh epilogue (a fusion named after its
    // root) runs once per iteration, reading h and w and writing t.
    if (s["name"] == "fusion.t" && s["runs"].get<double>() == 6) {
      dot_step = true;
      EXPECT_GE(s["bytes"].get<double>(), 6 * (256.0 * 512 * 4 * 2 + 512.0 * 512 * 4)) << s;
    }
  }
  EXPECT_TRUE(dot_step) << steps;
  EXPECT_LE(step_us, (*loop)["us"].get<double>() * (1 + 1e-9)) << *loop;
  EXPECT_GE(step_us, 0.5 * (*loop)["us"].get<double>()) << *loop;
  // Kernels without loops carry no steps.
  for (const auto& k : json["kernels"]) {
    if (k["name"] != "loop") EXPECT_FALSE(k.contains("steps")) << k;
  }
  RunResult table = Run(module + " --timing-only --chip v5e");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("step of loop ("), std::string::npos) << table.out;
}

}  // namespace
}  // namespace kiln::testing
