// End-to-end tests of `kiln run` on window ops and loops: a depthwise
// convolution and a max pool computed with their epilogues give the values
// of direct evaluation and move their arrays once; a loop kernel names the
// steps its time goes to.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/kiln_run_fixture.h"

namespace kiln::testing {
namespace {

// A MobileNet-v2 depthwise layer in NCHW, as torch_xla traces it: the
// convolution (of `stride`), the batch norm's scale and shift, ReLU6, then a
// 2x2 max pool plus a bias.
std::string MobileNetLayer(int batch, int side, int stride = 1) {
  auto act = [&](int s) {
    return "f32[" + std::to_string(batch) + ",32," + std::to_string(s) + "," + std::to_string(s) + "]";
  };
  const std::string in = act(side), c = act(side / stride), p = act(side / stride / 2);
  const std::string window = stride == 1 ? "size=3x3 pad=1_1x1_1"
                                         : "size=3x3 stride=" + std::to_string(stride) + "x" +
                                               std::to_string(stride) + " pad=1_1x1_1";
  return "HloModule mbv2_layer\n"
         "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
         "ENTRY main {\n"
         "  x = " +
         in +
         " parameter(0)\n"
         "  w = f32[32,1,3,3] parameter(1)\n"
         "  scale = f32[32] parameter(2)\n"
         "  shift = f32[32] parameter(3)\n"
         "  c = " +
         c + " convolution(x, w), window={" + window +
         "}, dim_labels=bf01_oi01->bf01, "
         "feature_group_count=32\n"
         "  s = " +
         c +
         " broadcast(scale), dimensions={1}\n"
         "  m = " +
         c +
         " multiply(c, s)\n"
         "  t = " +
         c +
         " broadcast(shift), dimensions={1}\n"
         "  a = " +
         c +
         " add(m, t)\n"
         "  zero = f32[] constant(0)\n"
         "  six = f32[] constant(6)\n"
         "  lo = " +
         c +
         " broadcast(zero), dimensions={}\n"
         "  hi = " +
         c +
         " broadcast(six), dimensions={}\n"
         "  r = " +
         c +
         " clamp(lo, a, hi)\n"
         "  ninf = f32[] constant(-inf)\n"
         "  pool = " +
         p +
         " reduce-window(r, ninf), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=max\n"
         "  pb = " +
         p +
         " broadcast(shift), dimensions={1}\n"
         "  ROOT out = " +
         p +
         " add(pool, pb)\n"
         "}\n";
}

const nlohmann::json* KernelNamed(const nlohmann::json& kernels, const std::string& name) {
  for (const auto& k : kernels) {
    if (k["name"] == name) return &k;
  }
  return nullptr;
}

TEST_F(KilnRunTest, WindowOpsFusedWithTheirEpiloguesGiveTheValuesOfDirectEvaluation) {
  const std::string module = Write("mbv2.hlo", MobileNetLayer(2, 14));
  RunResult direct = Run(module + " --direct --print-literals --random-inputs 4 --json");
  RunResult heuristic = Run(module + " --print-literals --random-inputs 4 --json");
  RunResult none = Run(module + " --plan none --random-inputs 4 --json");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(heuristic.exit_code, 0) << heuristic.err;
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const auto fused = nlohmann::json::parse(heuristic.out);
  ASSERT_EQ(fused["outputs"].size(), 1u) << heuristic.out;
  EXPECT_EQ(fused["outputs"], nlohmann::json::parse(direct.out)["outputs"]);
  // The convolution computes its batch norm and activation, the pool its
  // bias: far fewer kernels than one per op.
  EXPECT_LT(fused["kernels"].size() + 6, nlohmann::json::parse(none.out)["kernels"].size())
      << fused["kernels"];

  RunResult plan = Kiln("compile " + module + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  bool conv_epilogue = false, pool_epilogue = false;
  const auto decisions = nlohmann::json::parse(plan.out);
  for (const auto& d : decisions["fusion_decisions"]) {
    if (d.contains("sibling") || !d["fused"].get<bool>()) continue;
    conv_epilogue |= d["producer"] == "c" && d["consumer"] == "m" && d["rule"] == "output";
    pool_epilogue |= d["producer"] == "pool" && d["consumer"] == "out" && d["rule"] == "output";
  }
  EXPECT_TRUE(conv_epilogue) << plan.out;
  EXPECT_TRUE(pool_epilogue) << plan.out;
}

// At MobileNet's size (batch 96, 112x112) the fused depthwise kernel reads
// its input and writes its result once, plus the two rows each block of
// rows reads past its own (the 3x3 window's halo): it is bound by HBM, not
// by a grid that re-reads.
TEST_F(KilnRunTest, AFusedDepthwiseKernelMovesItsArraysOnce) {
  const std::string module = Write("mbv2_big.hlo", MobileNetLayer(96, 112));
  RunResult r = Run(module + " --timing-only --json --chip v5e");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  // The kernel holding the convolution is named after its root, the clamp.
  const nlohmann::json* conv = KernelNamed(json["kernels"], "r");
  if (conv == nullptr) conv = KernelNamed(json["kernels"], "a");
  ASSERT_NE(conv, nullptr) << json["kernels"];
  const double bytes = (*conv)["bytes"].get<double>(), ideal = (*conv)["ideal_bytes"].get<double>();
  EXPECT_GE(bytes, ideal) << *conv;
  EXPECT_LE(bytes, 1.35 * ideal) << *conv;
  ASSERT_EQ((*conv)["rereads"].size(), 1u) << *conv;  // the input, by its halo rows
  EXPECT_LE((*conv)["rereads"][0]["times"].get<double>(), 1.5) << *conv;
  EXPECT_EQ((*conv)["bound"], "memory") << *conv;
  // It is the convolution's kernel: a multiply-add per tap and element.
  EXPECT_GE((*conv)["flops"].get<double>(), 2 * 9 * 96.0 * 32 * 112 * 112) << *conv;
  // No scalar broadcast is written as an array of its own.
  EXPECT_EQ(KernelNamed(json["kernels"], "lo"), nullptr) << json["kernels"];
  EXPECT_EQ(KernelNamed(json["kernels"], "hi"), nullptr) << json["kernels"];
}

// A stride-2 depthwise layer (MobileNet's first block of each stage) reads
// every row of its input: a kernel of its result rows moves its whole
// input, not the half or quarter its result's extent would suggest.
TEST_F(KilnRunTest, AStridedDepthwiseKernelReadsItsWholeInput) {
  const std::string text = MobileNetLayer(96, 112, 2);
  const std::string module = Write("mbv2_s2.hlo", text);
  RunResult r = Run(module + " --timing-only --json --chip v5e");
  ASSERT_EQ(r.exit_code, 0) << r.err << text;
  const auto json = nlohmann::json::parse(r.out);
  const nlohmann::json* conv = nullptr;
  for (const auto& k : json["kernels"]) {
    if (k["flops"].get<double>() >= 2 * 9 * 96.0 * 32 * 56 * 56) conv = &k;
  }
  ASSERT_NE(conv, nullptr) << json["kernels"];
  // Input (feature-minor: 32 features padded to 128 lanes) read once at least.
  const double input = 96.0 * 112 * 112 * 128 * 4;
  EXPECT_GE((*conv)["bytes"].get<double>(), input) << *conv;
  EXPECT_GE((*conv)["bytes"].get<double>(), 0.99 * (*conv)["ideal_bytes"].get<double>()) << *conv;
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

// A depthwise layer's weight gradient as XLA writes it (batch grouped per
// feature, the window the whole image) is a sum of products streaming the
// activations and the output gradient once, on the vector unit: bound by
// HBM, not by the steps of a GEMM of one column per group.
TEST_F(KilnRunTest, ADepthwiseWeightGradientStreamsItsOperandsOnce) {
  const std::string module = Write("dw_grad.hlo", R"(HloModule dw_grad
ENTRY e {
  x = f32[96,144,56,56]{1,0,3,2} parameter(0)
  g = f32[96,144,56,56]{1,0,3,2} parameter(1)
  ROOT wg = f32[1,144,3,3] convolution(x, g), window={size=56x56 pad=1_1x1_1}, dim_labels=fb01_io01->bf01, batch_group_count=144
}
)");
  RunResult r = Run(module + " --timing-only --json --chip v5e");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  const nlohmann::json* grad = KernelNamed(json["kernels"], "wg");
  ASSERT_NE(grad, nullptr) << json["kernels"];
  EXPECT_EQ((*grad)["bound"], "memory") << *grad;
  EXPECT_DOUBLE_EQ((*grad)["flops"].get<double>(), 2 * 9 * 96.0 * 144 * 56 * 56) << *grad;
  EXPECT_GE((*grad)["bytes"].get<double>(), 2 * 96.0 * 144 * 56 * 56 * 4) << *grad;
  EXPECT_LE((*grad)["bytes"].get<double>(), 1.1 * (*grad)["ideal_bytes"].get<double>()) << *grad;
  EXPECT_LT((*grad)["grid_steps"].get<double>(), 100) << *grad;
}

// A scan that saves each step's bf16 attention heads into a stacked state
// (8 of every tile's 16 rows hold data as written).
constexpr const char* kStackedHeadsModule = R"(HloModule stacked_heads
body {
  p = (s32[], bf16[4,32,8,128], f32[32,8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  stack = bf16[4,32,8,128] get-tuple-element(p), index=1
  x = f32[32,8,128] get-tuple-element(p), index=2
  y = f32[32,8,128] tanh(x)
  h = bf16[32,8,128] convert(y)
  r = bf16[1,32,8,128] reshape(h)
  z = s32[] constant(0)
  next = bf16[4,32,8,128] dynamic-update-slice(stack, r, i, z, z, z)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], bf16[4,32,8,128], f32[32,8,128]) tuple(j, next, y)
}
cond {
  p = (s32[], bf16[4,32,8,128], f32[32,8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[32,8,128] parameter(0)
  zero = s32[] constant(0)
  fz = bf16[] constant(0)
  first = bf16[4,32,8,128] broadcast(fz), dimensions={}
  init = (s32[], bf16[4,32,8,128], f32[32,8,128]) tuple(zero, first, x)
  loop = (s32[], bf16[4,32,8,128], f32[32,8,128]) while(init), condition=cond, body=body
  saved = bf16[4,32,8,128] get-tuple-element(loop), index=1
  ROOT out = bf16[4,32,8,128] negate(saved)
}
)";

// The stacked state takes a layout with the 32 rows next to the lanes in
// the loop, its body and its init alike (compiler/passes/loop_state_layout.h),
// and the program computes what the module as written does.
TEST_F(KilnRunTest, ALoopStateLaidOutDenselyGivesTheValuesOfDirectEvaluation) {
  const std::string module = Write("stacked_heads.hlo", kStackedHeadsModule);
  RunResult direct = Run(module + " --direct --print-literals --random-inputs 6 --json");
  RunResult compiled = Run(module + " --print-literals --random-inputs 6 --json");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_EQ(nlohmann::json::parse(compiled.out)["outputs"], nlohmann::json::parse(direct.out)["outputs"]);
  RunResult printed = Kiln("compile " + module + " --print-module");
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("bf16[4,32,8,128]{3,1,2,0}, f32[32,8,128]) while("), std::string::npos)
      << printed.out;
}

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
