// End-to-end tests of `kiln run` on compiled executables: every plan gives
// the values of direct evaluation; the device time and kernel profile (text,
// --json, --trace); --timing-only for programs too large to evaluate;
// --dot-tiles; loops whose trip count depends on data; kiln executables as
// input. Drives the real binary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/kiln_run_fixture.h"

namespace kiln {
namespace {

using testing::ExpectError;
using testing::KilnRunTest;
using testing::RunResult;

nlohmann::json ParseJson(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << text;
  return json;
}

// The printed values: everything before the "eval" line.
std::string Values(const std::string& out) { return out.substr(0, out.find("eval ")); }

// A dense layer: dot, bias, relu and exp, which the heuristic fuses.
constexpr const char* kDenseModule = R"(HloModule dense
ENTRY main {
  x = f32[16,32] parameter(0)
  w = f32[32,8] parameter(1)
  b = f32[8] parameter(2)
  d = f32[16,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,8] broadcast(b), dimensions={1}
  s = f32[16,8] add(d, bb)
  zero = f32[] constant(0)
  zb = f32[16,8] broadcast(zero), dimensions={}
  r = f32[16,8] maximum(s, zb)
  e = f32[16,8] exponential(r)
  ROOT t = (f32[16,8], f32[16,8]) tuple(r, e)
}
)";

std::string DotModule(int64_t n) {
  std::string shape = "bf16[" + std::to_string(n) + "," + std::to_string(n) + "]";
  return "HloModule big_dot\nENTRY main {\n  a = " + shape + " parameter(0)\n  b = " + shape +
         " parameter(1)\n  ROOT d = " + shape +
         " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

// Runs its body `n` times, n a parameter: the trip count depends on data.
// x stays all ones (x . x / 128).
constexpr const char* kDataDependentLoop = R"(HloModule data_loop
cond {
  p = (s32[], s32[], f32[128,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[], f32[128,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  x = f32[128,128] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[128,128] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  scale = f32[] constant(0.0078125)
  sb = f32[128,128] broadcast(scale), dimensions={}
  y = f32[128,128] multiply(d, sb)
  ROOT t = (s32[], s32[], f32[128,128]) tuple(j, n, y)
}
ENTRY main {
  n = s32[] parameter(0)
  c = f32[] constant(1)
  x = f32[128,128] broadcast(c), dimensions={}
  zero = s32[] constant(0)
  init = (s32[], s32[], f32[128,128]) tuple(zero, n, x)
  w = (s32[], s32[], f32[128,128]) while(init), condition=cond, body=body
  ROOT r = f32[128,128] get-tuple-element(w), index=2
}
)";

TEST_F(KilnRunTest, EveryPlanGivesTheValuesOfDirectEvaluation) {
  std::string module = Write("dense.hlo", kDenseModule);
  RunResult direct = Run(module + " --direct --print-literals --random-inputs 5");
  RunResult none = Run(module + " --plan none --print-literals --random-inputs 5");
  RunResult heuristic = Run(module + " --plan heuristic --print-literals --random-inputs 5");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(none.exit_code, 0) << none.err;
  ASSERT_EQ(heuristic.exit_code, 0) << heuristic.err;
  EXPECT_NE(Values(direct.out).find("output 1: f32[16,8]"), std::string::npos) << direct.out;
  EXPECT_EQ(Values(none.out), Values(direct.out));
  EXPECT_EQ(Values(heuristic.out), Values(direct.out));
  // Direct evaluation has no device time; compiled runs do.
  EXPECT_EQ(direct.out.find("device time"), std::string::npos) << direct.out;
  EXPECT_NE(none.out.find("(none plan"), std::string::npos) << none.out;
  EXPECT_NE(heuristic.out.find("device time on v5e: "), std::string::npos) << heuristic.out;

  // The plans really differ: `none` runs more kernels.
  auto none_json = ParseJson(Run(module + " --plan none --json --random-inputs 5").out);
  auto fused_json = ParseJson(Run(module + " --json --random-inputs 5").out);
  EXPECT_GT(none_json["kernels"].size(), fused_json["kernels"].size());
}

// Weights kept in f32 and converted to bf16 for the dot, which the
// heuristic computes as the dot loads its blocks (a prologue) instead of
// materializing the converted weights; and the same inside a scan body,
// where the layer's weights are sliced from the stacked parameter first.
constexpr const char* kConvertedWeightsModule = R"(HloModule converted
body {
  p = (s32[], bf16[16,32], f32[3,32,32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = bf16[16,32] get-tuple-element(p), index=1
  stack = f32[3,32,32] get-tuple-element(p), index=2
  z = s32[] constant(0)
  ws = f32[1,32,32] dynamic-slice(stack, i, z, z), dynamic_slice_sizes={1,32,32}
  wr = f32[32,32] reshape(ws)
  wc = bf16[32,32] convert(wr)
  y = bf16[16,32] dot(x, wc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], bf16[16,32], f32[3,32,32]) tuple(j, y, stack)
}
cond {
  p = (s32[], bf16[16,32], f32[3,32,32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = bf16[16,32] parameter(0)
  w = f32[32,24] parameter(1)
  stack = f32[3,32,32] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], bf16[16,32], f32[3,32,32]) tuple(zero, x, stack)
  loop = (s32[], bf16[16,32], f32[3,32,32]) while(init), condition=cond, body=body
  h = bf16[16,32] get-tuple-element(loop), index=1
  wc = bf16[32,24] convert(w)
  ROOT d = bf16[16,24] dot(h, wc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST_F(KilnRunTest, ProloguesFusedIntoDotsGiveTheValuesOfDirectEvaluation) {
  std::string module = Write("converted.hlo", kConvertedWeightsModule);
  RunResult direct = Run(module + " --direct --print-literals --random-inputs 7");
  RunResult heuristic = Run(module + " --print-literals --random-inputs 7");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(heuristic.exit_code, 0) << heuristic.err;
  EXPECT_NE(Values(direct.out).find("output 0: bf16[16,24]"), std::string::npos) << direct.out;
  EXPECT_EQ(Values(heuristic.out), Values(direct.out));
  // Both prologues are taken: in the entry and in the scan body.
  RunResult plan = Kiln("compile " + module + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  auto json = ParseJson(plan.out);
  auto fused = [](const nlohmann::json& decisions, const std::string& producer) {
    for (const auto& d : decisions) {
      if (d["producer"] == producer && d["rule"] == "prologue") return d["fused"] == true;
    }
    return false;
  };
  EXPECT_TRUE(fused(json["fusion_decisions"], "wc")) << json["fusion_decisions"];
  bool in_body = false;
  for (const auto& body : json["body_fusion_decisions"]) {
    if (body["computation"] == "body") in_body = fused(body["decisions"], "wc") && fused(body["decisions"], "ws");
  }
  EXPECT_TRUE(in_body) << json["body_fusion_decisions"];
}

// A softmax whose exponential is computed in its sum's kernel, which also
// writes it for the division.
constexpr const char* kSoftmaxModule = R"(HloModule softmax
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[16,128] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  mx = f32[16] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[16,128] broadcast(mx), dimensions={0}
  sub = f32[16,128] subtract(x, mb)
  e = f32[16,128] exponential(sub)
  sum = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[16,128] broadcast(sum), dimensions={0}
  ROOT d = f32[16,128] divide(e, sb)
}
)";

TEST_F(KilnRunTest, AValueWrittenByItsConsumersKernelGivesTheValuesOfDirectEvaluation) {
  std::string module = Write("softmax.hlo", kSoftmaxModule);
  RunResult direct = Run(module + " --direct --print-literals --random-inputs 3 --json");
  RunResult heuristic = Run(module + " --print-literals --random-inputs 3 --json");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(heuristic.exit_code, 0) << heuristic.err;
  const auto json = ParseJson(heuristic.out);
  ASSERT_EQ(json["outputs"].size(), 1u) << heuristic.out;
  EXPECT_EQ(json["outputs"], ParseJson(direct.out)["outputs"]);
  // Three kernels: the max, the exponential with its sum, the division.
  ASSERT_EQ(json["kernels"].size(), 3u) << json["kernels"];
  RunResult plan = Kiln("compile " + module + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  bool merged = false;
  const auto decisions = ParseJson(plan.out);
  for (const auto& d : decisions["fusion_decisions"]) {
    if (!d.contains("sibling")) continue;
    merged |= d["producer"].get<std::string>() == "e" && d["sibling"].get<std::string>() == "e" &&
              d["consumer"].get<std::string>() == "sum" && d["fused"].get<bool>();
  }
  EXPECT_TRUE(merged) << plan.out;
}

TEST_F(KilnRunTest, JsonHasDeviceTimeAndKernelProfile) {
  RunResult r = Run(Write("dense.hlo", kDenseModule) + " --json --chip v6e --random-inputs 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = ParseJson(r.out);
  EXPECT_EQ(json["module"], "dense");
  EXPECT_EQ(json["chip"], "v6e");
  EXPECT_EQ(json["plan"], "heuristic");
  EXPECT_EQ(json["outputs"].size(), 2u);
  ASSERT_TRUE(json["device_us"].is_number()) << r.out;
  EXPECT_GT(json["device_us"].get<double>(), 0);
  ASSERT_TRUE(json["kernels"].is_array()) << r.out;
  ASSERT_FALSE(json["kernels"].empty());
  double sum_us = 0;
  for (const auto& kernel : json["kernels"]) {
    EXPECT_TRUE(kernel["name"].is_string()) << kernel;
    EXPECT_TRUE(kernel["us"].is_number()) << kernel;
    EXPECT_TRUE(kernel["bound"] == "compute" || kernel["bound"] == "memory" ||
                kernel["bound"] == "overhead")
        << kernel;
    EXPECT_TRUE(kernel["flops"].is_number()) << kernel;
    EXPECT_TRUE(kernel["bytes"].is_number()) << kernel;
    sum_us += kernel["us"].get<double>();
  }
  EXPECT_NEAR(sum_us, json["device_us"].get<double>(), 1e-6 * sum_us);
}

TEST_F(KilnRunTest, TimingOnlyTimesABigDotWithoutValues) {
  RunResult r = Run(Write("dot.hlo", DotModule(8192)) + " --timing-only --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = ParseJson(r.out);
  EXPECT_FALSE(json.contains("outputs")) << r.out;
  EXPECT_FALSE(json.contains("eval_ms")) << r.out;
  // 2 x 8192^3 FLOP at v5e's 197 TFLOP/s is 5.58 ms at full MXU use.
  EXPECT_NEAR(json["device_us"].get<double>(), 5580, 558) << r.out;

  RunResult text = Run(Path("dot.hlo") + " --timing-only");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("output 0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("device time on v5e: "), std::string::npos) << text.out;
}

// Every kernel reports its ideal bytes (inputs and outputs once) beside the
// bytes it moves and the inputs it re-reads; the run reports its HFU.
TEST_F(KilnRunTest, TimingReportsIdealBytesRereadsAndHfu) {
  RunResult r = Run(Write("dot.hlo", DotModule(8192)) + " --timing-only --json --dot-tiles 512,1024,1024");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = ParseJson(r.out);
  ASSERT_EQ(json["kernels"].size(), 1u) << r.out;
  const auto& dot = json["kernels"][0];
  const double array = 2.0 * 8192 * 8192;
  EXPECT_DOUBLE_EQ(dot["ideal_bytes"].get<double>(), 3 * array) << dot;
  EXPECT_DOUBLE_EQ(json["ideal_bytes"].get<double>(), 3 * array) << r.out;
  // The lhs panel is read once per column of blocks, the rhs once per row.
  ASSERT_EQ(dot["rereads"].size(), 2u) << dot;
  EXPECT_EQ(dot["rereads"][0]["input"], 0);
  EXPECT_NEAR(dot["rereads"][0]["times"].get<double>(), 8, 1e-9);
  EXPECT_EQ(dot["rereads"][1]["input"], 1);
  EXPECT_NEAR(dot["rereads"][1]["times"].get<double>(), 16, 1e-9);
  EXPECT_EQ(json["chips"], 1);
  const double hfu = json["flops"].get<double>() / (json["device_us"].get<double>() * 1e-6 * 1.97e14);
  EXPECT_NEAR(json["hfu"].get<double>(), hfu, 1e-9) << r.out;

  RunResult text = Run(Path("dot.hlo") + " --timing-only --dot-tiles 512,1024,1024");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ideal"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("re-reads in0 x8.0, in1 x16.0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("HFU "), std::string::npos) << text.out;
}

// The MaxText train step: kernels whose operands are transposed relative to
// their output (divide.1674, reduce.1453) used to move 5.5 TB each for
// arrays of a few GB. No kernel without a contraction may move more than 4x
// its ideal bytes.
TEST_F(KilnRunTest, MaxTextStepMovesItsArraysNotItsGrid) {
  std::string module = std::string(KILN_CORPUS_DIR) +
                       "/hlo/jax-dumps/tools__benchmarks__hlo__nv_maxtext_1n1g_jit_train_step_before_optimization.hlo";
  if (!std::filesystem::exists(module)) GTEST_SKIP() << "corpus missing: " << module;
  RunResult r = Run(module + " --timing-only --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = ParseJson(r.out);
  int checked = 0;
  for (const auto& kernel : json["kernels"]) {
    const double ideal = kernel["ideal_bytes"].get<double>();
    ASSERT_GT(ideal, 0) << kernel;
    if (kernel["mxu_utilization"].get<double>() > 0) continue;
    ++checked;
    EXPECT_LE(kernel["bytes"].get<double>(), 4 * ideal) << kernel;
    const std::string name = kernel["name"];
    if (name == "divide.1674" || name == "reduce.1453") {
      EXPECT_LE(kernel["bytes"].get<double>(), 1.1 * ideal) << kernel;
    }
  }
  EXPECT_GT(checked, 80);  // 97 since reduction epilogues share their reduction's kernel
}

TEST_F(KilnRunTest, TooLargeToEvaluateFailsFastButTimingOnlyWorks) {
  // Operands and result of 8 GiB each: over kiln run's 16 GiB budget.
  std::string module = Write("huge.hlo", DotModule(65536));
  ExpectError(Run(module + " --chip tpu7x --random-inputs 1"), "too large to evaluate");
  ExpectError(Run(module + " --chip tpu7x --random-inputs 1"), "--timing-only");
  RunResult r = Run(module + " --chip tpu7x --timing-only");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("device time on tpu7x: "), std::string::npos) << r.out;
}

TEST_F(KilnRunTest, SmallForcedDotTilesAreMuchSlower) {
  std::string module = Write("dot.hlo", DotModule(8192));
  RunResult small = Run(module + " --timing-only --json --dot-tiles 128,128,128");
  RunResult large = Run(module + " --timing-only --json --dot-tiles 512,1024,1024");
  ASSERT_EQ(small.exit_code, 0) << small.err;
  ASSERT_EQ(large.exit_code, 0) << large.err;
  double small_us = ParseJson(small.out)["device_us"].get<double>();
  double large_us = ParseJson(large.out)["device_us"].get<double>();
  EXPECT_GE(small_us, 10 * large_us) << small_us << " us vs " << large_us << " us";
  EXPECT_NE(small.out.find("128x128x128"), std::string::npos) << small.out;
}

TEST_F(KilnRunTest, BadDotTilesAreRejected) {
  std::string module = Write("dot.hlo", DotModule(8192));
  ExpectError(Run(module + " --timing-only --dot-tiles 128,x"), "--dot-tiles");
  ExpectError(Run(module + " --timing-only --dot-tiles 8192,8192,8192"), "VMEM");
}

TEST_F(KilnRunTest, TraceIsChromeTraceJson) {
  std::string trace = Path("trace.json");
  RunResult r = Run(Write("dot.hlo", DotModule(4096)) + " --timing-only --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(trace);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto json = ParseJson(text);
  ASSERT_TRUE(json["traceEvents"].is_array()) << text;
  int kernels = 0;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] != "X") continue;
    ++kernels;
    EXPECT_EQ(event["name"], "d");
    EXPECT_GT(event["dur"].get<double>(), 0);
  }
  EXPECT_EQ(kernels, 1) << text;
}

TEST_F(KilnRunTest, DataDependentLoopIsTimedFromTheRunButNotStatically) {
  std::string module = Write("loop.hlo", kDataDependentLoop);
  auto loop_us = [&](int trips) {
    std::string inputs = Write("n.txt", "param.0 = s32[] " + std::to_string(trips) + "\n");
    RunResult r = Run(module + " --json --input-literals " + inputs);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto json = ParseJson(r.out);
    EXPECT_EQ(json["outputs"][0]["min"], 1.0) << r.out;
    EXPECT_EQ(json["outputs"][0]["max"], 1.0) << r.out;
    for (const auto& kernel : json["kernels"]) {
      if (kernel["name"] == "w") return kernel["us"].get<double>();
    }
    ADD_FAILURE() << "no kernel named w: " << r.out;
    return 0.0;
  };
  double few = loop_us(2);
  double many = loop_us(40);
  EXPECT_GT(few, 0);
  EXPECT_GT(many, 3 * few) << "the observed trip count should drive the loop's time";

  RunResult r = Run(module + " --timing-only");
  ExpectError(r, "depends on data");
  EXPECT_NE(r.err.find("%w"), std::string::npos) << r.err;
}

TEST_F(KilnRunTest, RunsAKilnExecutable) {
  std::string module = Write("dense.hlo", kDenseModule);
  std::string exe = Path("dense.kexe");
  RunResult compiled = Kiln("compile " + module + " --chip v5p --out " + exe);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  RunResult from_text = Run(module + " --chip v5p --print-literals --random-inputs 9");
  RunResult from_exe = Run(exe + " --print-literals --random-inputs 9");
  ASSERT_EQ(from_text.exit_code, 0) << from_text.err;
  ASSERT_EQ(from_exe.exit_code, 0) << from_exe.err;
  EXPECT_EQ(Values(from_exe.out), Values(from_text.out));
  EXPECT_NE(from_exe.out.find("device time on v5p: "), std::string::npos) << from_exe.out;

  // A damaged executable is refused with the loader's reason.
  std::ifstream in(exe, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string cut = Write("cut.kexe", bytes.substr(0, bytes.size() / 2));
  ExpectError(Run(cut + " --random-inputs 9"), "truncated");
  ExpectError(Run(exe + " --direct"), "--direct needs HLO text");
  ExpectError(Run(exe + " --plan none --random-inputs 9"), "--plan needs HLO text");
  // Planned for v5p's VMEM and HBM: not run as if it were another chip's,
  // as the server never does; the same chip in another case is the same.
  ExpectError(Run(exe + " --chip v5e --random-inputs 9"), "was compiled for v5p, not v5e");
  EXPECT_EQ(Run(exe + " --chip V5P --random-inputs 9").exit_code, 0);
  // A folder is not a module.
  ExpectError(Run(Path("") + " --random-inputs 9"), "is a folder, not a file");
}

TEST_F(KilnRunTest, DirectExcludesCompileFlags) {
  RunResult r = Run(Write("dense.hlo", kDenseModule) + " --direct --plan none --random-inputs 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}

// The Llama 3.1 405B train step needs hundreds of GiB to evaluate: a normal
// run is refused before allocating; --timing-only prints a device time or
// fails with a one-line reason, never a crash.
TEST_F(KilnRunTest, Llama405BIsRefusedOrTimedNeverCrashes) {
  std::string module = std::string(KILN_CORPUS_DIR) +
                       "/hlo/jax-dumps/tools__benchmarks__hlo__hlo_llama31_405b_bf16_16x8.hlo";
  if (!std::filesystem::exists(module)) GTEST_SKIP() << "corpus missing: " << module;
  ExpectError(Run(module + " --random-inputs 1"), "too large to evaluate");
  RunResult r = Run(module + " --timing-only");
  if (r.exit_code == 0) {
    EXPECT_NE(r.out.find("device time on v5e: "), std::string::npos) << r.out;
  } else {
    ExpectError(r, module);
  }
}

}  // namespace
}  // namespace kiln
