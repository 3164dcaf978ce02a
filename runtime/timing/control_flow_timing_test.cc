// Timing of kernels with control flow: static trip counts, data-dependent
// loops (an error without values, priced from observed counts with them),
// the step budget, and the Chrome trace of a run.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/mxu_model.h"
#include "runtime/timing/profile_output.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

// A loop of `trips` matmuls; `limit` is either a constant or parameter 1.
std::string LoopKernel(const std::string& limit) {
  return "HloModule loop\n"
         "cond {\n  p = (s32[], f32[512,512], s32[]) parameter(0)\n"
         "  i = s32[] get-tuple-element(p), index=0\n  n = s32[] get-tuple-element(p), index=2\n"
         "  k = s32[] constant(10)\n  ROOT c = pred[] compare(i, " + limit + "), direction=LT\n}\n"
         "body {\n  p = (s32[], f32[512,512], s32[]) parameter(0)\n"
         "  i = s32[] get-tuple-element(p), index=0\n  x = f32[512,512] get-tuple-element(p), index=1\n"
         "  n = s32[] get-tuple-element(p), index=2\n  one = s32[] constant(1)\n"
         "  j = s32[] add(i, one)\n"
         "  y = f32[512,512] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  ROOT t = (s32[], f32[512,512], s32[]) tuple(j, y, n)\n}\n"
         "ENTRY e {\n  x = f32[512,512] parameter(0)\n  n = s32[] parameter(1)\n"
         "  zero = s32[] constant(0)\n  t = (s32[], f32[512,512], s32[]) tuple(zero, x, n)\n"
         "  w = (s32[], f32[512,512], s32[]) while(t), condition=cond, body=body\n"
         "  ROOT r = f32[512,512] get-tuple-element(w), index=1\n}\n";
}

std::unique_ptr<LoadedProgram> LoopProgram(const std::string& limit) {
  testing::ProgramBuilder b;
  uint32_t x = b.Parameter("f32[512,512]");
  uint32_t n = b.Parameter("s32[]");
  uint32_t r = b.Kernel("while", "control", LoopKernel(limit), {x, n}, {"f32[512,512]"})[0];
  auto loaded = b.Load(r);
  EXPECT_TRUE(loaded) << loaded.error().message;
  return loaded ? std::move(*loaded) : nullptr;
}

const hlo::Instruction* FindWhile(const LoadedProgram& program) {
  for (const auto& i : program.kernel_module(0).entry()->instructions()) {
    if (i->opcode() == hlo::Opcode::kWhile) return i.get();
  }
  return nullptr;
}

TEST(ControlFlowTimingTest, StaticTripCountMultipliesTheBody) {
  auto program = LoopProgram("k");
  ASSERT_NE(program, nullptr);
  auto profile = SimulateProgram(*program, *FindChip("v5e"));
  ASSERT_TRUE(profile) << profile.error().message;
  const KernelProfile& k = profile->kernels[0];
  // One launch step, then each loop op is a step of its own: ten matmuls,
  // ten counter increments and eleven condition checks.
  EXPECT_DOUBLE_EQ(k.grid_steps, 1 + 10 + 10 + 11);
  EXPECT_DOUBLE_EQ(k.flops, 10 * 2.0 * 512 * 512 * 512 + 10 + 11);
  EXPECT_EQ(k.tiling, "untiled; loop ops step by step");
}

// A body with a compute-bound matmul and a memory-bound exponential: the
// two run one after the other, so the loop takes the sum of their times,
// not the larger of its summed compute and summed traffic.
TEST(ControlFlowTimingTest, LoopOpsRunAsStepsOfTheirOwn) {
  const std::string kernel =
      "HloModule loop\n"
      "cond {\n  p = (s32[], bf16[2048,2048], f32[2048,2048]) parameter(0)\n"
      "  i = s32[] get-tuple-element(p), index=0\n  k = s32[] constant(10)\n"
      "  ROOT c = pred[] compare(i, k), direction=LT\n}\n"
      "body {\n  p = (s32[], bf16[2048,2048], f32[2048,2048]) parameter(0)\n"
      "  i = s32[] get-tuple-element(p), index=0\n  x = bf16[2048,2048] get-tuple-element(p), index=1\n"
      "  b = f32[2048,2048] get-tuple-element(p), index=2\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
      "  y = bf16[2048,2048] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  z = f32[2048,2048] exponential(b)\n"
      "  ROOT t = (s32[], bf16[2048,2048], f32[2048,2048]) tuple(j, y, z)\n}\n"
      "ENTRY e {\n  x = bf16[2048,2048] parameter(0)\n  b = f32[2048,2048] parameter(1)\n"
      "  zero = s32[] constant(0)\n  t = (s32[], bf16[2048,2048], f32[2048,2048]) tuple(zero, x, b)\n"
      "  w = (s32[], bf16[2048,2048], f32[2048,2048]) while(t), condition=cond, body=body\n"
      "  ROOT r = bf16[2048,2048] get-tuple-element(w), index=1\n}\n";
  testing::ProgramBuilder builder;
  uint32_t x = builder.Parameter("bf16[2048,2048]");
  uint32_t b = builder.Parameter("f32[2048,2048]");
  uint32_t r = builder.Kernel("while", "control", kernel, {x, b}, {"bf16[2048,2048]"})[0];
  auto program = builder.Load(r);
  ASSERT_TRUE(program) << program.error().message;
  auto profile = SimulateProgram(**program, *FindChip("v5e"));
  ASSERT_TRUE(profile) << profile.error().message;
  const KernelProfile& k = profile->kernels[0];
  const double overlapped = k.overhead_seconds + std::max(k.compute_seconds, k.memory_seconds);
  EXPECT_GT(k.seconds, 1.3 * overlapped) << k.seconds << " s vs " << overlapped << " s overlapped; compute " << k.compute_seconds << " memory " << k.memory_seconds;
  EXPECT_LE(k.seconds, k.overhead_seconds + k.compute_seconds + k.memory_seconds);
}

// A loop over 8 chips that all-gathers a weight shard each trip: when the
// trip's matmul does not read the gathered weight, the gather moves over
// ICI while the matmul runs; when it does, the two take turns.
TEST(ControlFlowTimingTest, CollectivesOverlapLoopStepsThatDoNotWaitForThem) {
  auto time_loop = [](bool matmul_reads_gather) -> Result<KernelProfile> {
    const std::string rhs = matmul_reads_gather ? "g" : "x";
    const std::string kernel =
        "HloModule loop\n"
        "cond {\n  p = (s32[], bf16[4096,4096], bf16[512,4096]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n  k = s32[] constant(4)\n"
        "  ROOT c = pred[] compare(i, k), direction=LT\n}\n"
        "body {\n  p = (s32[], bf16[4096,4096], bf16[512,4096]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n  x = bf16[4096,4096] get-tuple-element(p), index=1\n"
        "  w = bf16[512,4096] get-tuple-element(p), index=2\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
        "  g = bf16[4096,4096] all-gather(w), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}\n"
        "  y = bf16[4096,4096] dot(x, " + rhs + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  z = bf16[4096,4096] add(y, g)\n"
        "  ROOT t = (s32[], bf16[4096,4096], bf16[512,4096]) tuple(j, z, w)\n}\n"
        "ENTRY e {\n  x = bf16[4096,4096] parameter(0)\n  w = bf16[512,4096] parameter(1)\n"
        "  zero = s32[] constant(0)\n  t = (s32[], bf16[4096,4096], bf16[512,4096]) tuple(zero, x, w)\n"
        "  l = (s32[], bf16[4096,4096], bf16[512,4096]) while(t), condition=cond, body=body\n"
        "  ROOT r = bf16[4096,4096] get-tuple-element(l), index=1\n}\n";
    testing::ProgramBuilder builder;
    uint32_t x = builder.Parameter("bf16[4096,4096]");
    uint32_t w = builder.Parameter("bf16[512,4096]");
    uint32_t r = builder.Kernel("while", "control", kernel, {x, w}, {"bf16[4096,4096]"})[0];
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<LoadedProgram> program, builder.Load(r));
    const ChipSpec& chip = *FindChip("v5e");
    TimingOptions options;
    KILN_ASSIGN_OR_RETURN(options.topology, ParseTopology("2x4", chip));
    KILN_ASSIGN_OR_RETURN(DeviceProfile profile, SimulateProgram(*program, chip, options));
    return profile.kernels[0];
  };
  Result<KernelProfile> hidden = time_loop(false);
  Result<KernelProfile> waited = time_loop(true);
  ASSERT_TRUE(hidden) << hidden.error().message;
  ASSERT_TRUE(waited) << waited.error().message;
  ASSERT_EQ(hidden->collectives.size(), 1u);
  const CollectiveTime& gather = hidden->collectives[0];
  const double gathers = gather.seconds * gather.runs;
  EXPECT_DOUBLE_EQ(gather.runs, 4);
  EXPECT_GT(gathers, 0);
  // The same work either way; only the order differs.
  EXPECT_DOUBLE_EQ(hidden->ici_seconds, waited->ici_seconds);
  EXPECT_LT(hidden->seconds, waited->seconds - 0.5 * gathers)
      << hidden->seconds << " s vs " << waited->seconds << " s; gathers " << gathers << " s";
}

// A dot in a loop body is tiled as the same dot is when it is a kernel of
// its own: ten trips cost ten of that kernel's block pipelines (fill,
// steps, drain), not ten MXU rooflines.
TEST(ControlFlowTimingTest, ALoopDotCostsWhatTheSameDotCostsAsAKernel) {
  const ChipSpec& chip = *FindChip("v5e");
  auto loop = LoopProgram("k");
  ASSERT_NE(loop, nullptr);
  auto looped = SimulateProgram(*loop, chip);
  ASSERT_TRUE(looped) << looped.error().message;

  auto alone = testing::DotProgram("f32[512,512]", "f32[512,512]", "f32[512,512]");
  ASSERT_TRUE(alone) << alone.error().message;
  auto kernel = SimulateProgram(**alone, chip);
  ASSERT_TRUE(kernel) << kernel.error().message;

  const double dot_pipeline = kernel->kernels[0].seconds - chip.launch_overhead_s;
  const hlo::Instruction* body_dot = nullptr;
  for (const auto& c : loop->kernel_module(0).computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == hlo::Opcode::kDot) body_dot = i.get();
    }
  }
  ASSERT_NE(body_dot, nullptr);
  auto contraction = DescribeContraction(*body_dot);
  ASSERT_TRUE(contraction);
  const double roofline = MxuSeconds(*contraction, contraction->gemm, chip);
  ASSERT_GT(dot_pipeline, 1.02 * roofline) << "the kernel's pipeline should cost more than its roofline";
  // The rest of the loop (counter steps, condition checks) is overhead-sized.
  const double rest = looped->kernels[0].seconds - 10 * dot_pipeline;
  EXPECT_GE(rest, 0) << looped->kernels[0].seconds << " s for ten trips of a " << dot_pipeline << " s dot";
  EXPECT_LT(rest, 40 * chip.step_overhead_s + chip.launch_overhead_s + 1e-6)
      << looped->kernels[0].seconds << " s for ten trips of a " << dot_pipeline << " s dot";
}

TEST(ControlFlowTimingTest, DataDependentLoopNeedsValues) {
  auto program = LoopProgram("n");
  ASSERT_NE(program, nullptr);
  auto profile = SimulateProgram(*program, *FindChip("v5e"));
  ASSERT_FALSE(profile);
  EXPECT_NE(profile.error().message.find("timing-only: while loop %w trip count depends on data"),
            std::string::npos)
      << profile.error().message;
}

TEST(ControlFlowTimingTest, ObservedCountsPriceDataDependentLoops) {
  auto program = LoopProgram("n");
  ASSERT_NE(program, nullptr);
  auto timer = ProgramTimer::Create(*program, *FindChip("v5e"));
  ASSERT_TRUE(timer) << timer.error().message;
  ControlFlowCounts counts;
  counts.while_iterations[FindWhile(*program)] = 7;
  auto seven = (*timer)->TimeKernel(0, &counts);
  ASSERT_TRUE(seven) << seven.error().message;
  counts.while_iterations[FindWhile(*program)] = 70;
  auto seventy = (*timer)->TimeKernel(0, &counts);
  ASSERT_TRUE(seventy) << seventy.error().message;
  EXPECT_DOUBLE_EQ(seven->grid_steps, 1 + 2 * 7 + 8);  // launch, matmul + increment, checks
  EXPECT_DOUBLE_EQ(seventy->grid_steps, 1 + 2 * 70 + 71);
  // Launch and argument traffic are paid once; the body ten times as often.
  EXPECT_GT(seventy->seconds, 7 * seven->seconds);
  EXPECT_LT(seventy->seconds, 10 * seven->seconds);
  EXPECT_FALSE((*timer)->TimeKernel(0, nullptr));
  EXPECT_FALSE((*timer)->TimeKernel(1, &counts));
}

TEST(ControlFlowTimingTest, RunawayLoopsHitTheStepBudget) {
  auto program = LoopProgram("k");
  ASSERT_NE(program, nullptr);
  TimingOptions options;
  options.iteration_budget = 5;
  auto profile = SimulateProgram(*program, *FindChip("v5e"), options);
  ASSERT_FALSE(profile);
  EXPECT_NE(profile.error().message.find("step budget"), std::string::npos) << profile.error().message;
}

TEST(ChromeTraceTest, WritesCompleteEventsPerKernel) {
  auto program = testing::DotProgram("bf16[1024,1024]", "bf16[1024,1024]", "bf16[1024,1024]");
  ASSERT_TRUE(program) << program.error().message;
  auto loop = LoopProgram("k");
  ASSERT_NE(loop, nullptr);
  auto a = SimulateProgram(**program, *FindChip("v5e"));
  auto b = SimulateProgram(*loop, *FindChip("v5e"));
  ASSERT_TRUE(a && b);
  std::vector<KernelProfile> kernels = a->kernels;
  kernels.push_back(b->kernels[0]);
  DeviceProfile profile = AssembleProfile("v5e", kernels);

  std::string path = ::testing::TempDir() + "/kiln_trace.json";
  ASSERT_TRUE(WriteChromeTrace(profile, path));
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(trace.is_discarded()) << "not valid JSON";
  int complete = 0;
  double end = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_GE(e["ts"].get<double>(), end - 1e-9) << "events overlap on one track";
    end = e["ts"].get<double>() + e["dur"].get<double>();
    EXPECT_GT(e["dur"].get<double>(), 0);
    EXPECT_TRUE(e["args"].contains("bound"));
  }
  EXPECT_EQ(complete, 2);
  EXPECT_NEAR(end, profile.seconds * 1e6, 1e-6);

  EXPECT_FALSE(WriteChromeTrace(profile, "/nonexistent-dir/trace.json"));
  nlohmann::json summary = ProfileToJson(profile);
  EXPECT_NEAR(summary["device_us"].get<double>(), profile.seconds * 1e6, 1e-9);
  ASSERT_EQ(summary["kernels"].size(), 2u);
  for (const char* field : {"name", "us", "bound", "flops", "bytes"}) {
    EXPECT_TRUE(summary["kernels"][0].contains(field)) << field;
  }
  EXPECT_NE(FormatProfile(profile).find("device time on v5e"), std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime::timing
