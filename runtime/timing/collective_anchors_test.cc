// Collective kernels timed on a slice, end to end through the simulator,
// against the measurements "How to Scale Your Model" gives (sharding
// chapter, Pop Quiz 2): AllGather_Y of bf16[2048,8192] on a v5e mesh
// {X: 8, Y: 4}, gathering over the 4-chip axis (no wraparound below 16),
// measured at 680 us; the same for bf16[256,256], latency bound, measured
// at about 8 us. The model must land within 25% of each.
#include <gtest/gtest.h>

#include <string>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/profile_output.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

using testing::ProgramBuilder;

const ChipSpec& ChipV5e() { return *FindChip("v5e"); }

TimingOptions OnSlice(const char* topology) {
  TimingOptions options;
  auto t = ParseTopology(topology, ChipV5e());
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  if (t) options.topology = *t;
  return options;
}

// One all-gather kernel as JAX emits it for AllGather_Y on a 32-chip mesh
// whose Y axis is the slice's 4-long x axis (device ids x-fastest), or its
// async pair when `async`.
DeviceProfile GatherOverY(int64_t rows, int64_t cols, const TimingOptions& options, bool async = false) {
  const std::string shard = "bf16[" + std::to_string(rows / 4) + "," + std::to_string(cols) + "]";
  const std::string full = "bf16[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  const std::string attrs = "channel_id=1, replica_groups=[8,4]<=[32], dimensions={0}, use_global_device_ids=true";
  ProgramBuilder b;
  uint32_t x = b.Parameter(shard);
  uint32_t out = 0;
  if (!async) {
    std::string hlo = "HloModule k\nENTRY e {\n  p = " + shard + " parameter(0)\n  ROOT g = " + full +
                      " all-gather(p), " + attrs + "\n}\n";
    out = b.Kernel("all-gather", "single", hlo, {x}, {full})[0];
  } else {
    const std::string pair = "(" + shard + ", " + full + ")";
    std::string start = "HloModule k\nENTRY e {\n  p = " + shard + " parameter(0)\n  ROOT s = " + pair +
                        " all-gather-start(p), " + attrs + "\n}\n";
    std::string done = "HloModule k\nENTRY e {\n  p = " + pair + " parameter(0)\n  ROOT d = " + full +
                       " all-gather-done(p)\n}\n";
    uint32_t started = b.Kernel("all-gather-start", "single", start, {x}, {pair})[0];
    out = b.Kernel("all-gather-done", "single", done, {started}, {full})[0];
  }
  auto program = b.Load(out);
  EXPECT_TRUE(program) << program.error().message;
  if (!program) return {};
  auto profile = SimulateProgram(**program, ChipV5e(), options);
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? *profile : DeviceProfile{};
}

TEST(CollectiveAnchorsTest, BookAllGatherOfBf16_2048x8192OnFourV5eChips) {
  DeviceProfile p = GatherOverY(2048, 8192, OnSlice("4x8"));
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelProfile& k = p.kernels[0];
  EXPECT_NEAR(k.seconds, 680e-6, 0.25 * 680e-6) << "model " << k.seconds * 1e6 << " us, measured 680 us";
  EXPECT_EQ(k.bound, Bound::kIci);
  ASSERT_EQ(k.collectives.size(), 1u);
  EXPECT_EQ(k.collectives[0].participants, 4);
  EXPECT_EQ(k.collectives[0].groups, 8);
  EXPECT_EQ(k.collectives[0].route, "line x(4)");
  // 3 shards of 8.4 MB over one link at 4.5e10 B/s, 3 hops, one launch.
  const double shard = 512.0 * 8192 * 2;
  EXPECT_DOUBLE_EQ(k.ici_seconds, 3 * shard / 4.5e10 + 3e-6);
  EXPECT_DOUBLE_EQ(k.seconds, k.ici_seconds + k.overhead_seconds);  // launch and one step
  EXPECT_EQ(p.topology, "4x8");
  EXPECT_EQ(p.chips, 32);
}

// FSDP as a scan over layers: each of the loop's 5 trips gathers the same
// bf16[2048,8192] weight, priced over ICI every trip like the one above.
TEST(CollectiveAnchorsTest, ACollectiveInALoopIsPricedEveryTrip) {
  const std::string shard = "bf16[512,8192]", full = "bf16[2048,8192]";
  const std::string state = "(s32[], " + shard + ")";
  const std::string hlo =
      "HloModule k\n"
      "cond {\n  p = " + state + " parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(5)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = " + state + " parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  x = " + shard + " get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
      "  g = " + full + " all-gather(x), channel_id=1, replica_groups=[8,4]<=[32], dimensions={0}, "
      "use_global_device_ids=true\n"
      "  s = " + shard + " slice(g), slice={[0:512], [0:8192]}\n"
      "  ROOT t = " + state + " tuple(j, s)\n}\n"
      "ENTRY e {\n  x = " + shard + " parameter(0)\n  zero = s32[] constant(0)\n"
      "  t = " + state + " tuple(zero, x)\n  w = " + state + " while(t), condition=cond, body=body\n"
      "  ROOT r = " + shard + " get-tuple-element(w), index=1\n}\n";
  ProgramBuilder b;
  uint32_t x = b.Parameter(shard);
  uint32_t out = b.Kernel("while", "control", hlo, {x}, {shard})[0];
  auto program = b.Load(out);
  ASSERT_TRUE(program) << program.error().message;
  auto profile = SimulateProgram(**program, ChipV5e(), OnSlice("4x8"));
  ASSERT_TRUE(profile) << profile.error().message;
  const KernelProfile& k = profile->kernels[0];
  ASSERT_EQ(k.collectives.size(), 1u);
  EXPECT_EQ(k.collectives[0].runs, 5);
  EXPECT_EQ(k.collectives[0].route, "line x(4)");
  const double one_gather = 3 * 512.0 * 8192 * 2 / 4.5e10 + 3e-6;
  EXPECT_DOUBLE_EQ(k.collectives[0].seconds, one_gather);
  EXPECT_DOUBLE_EQ(k.ici_seconds, 5 * one_gather);
  EXPECT_GT(k.seconds, k.ici_seconds);  // plus the slices, counters and checks, one after another

  // On one chip the gather is a copy: no ICI at all.
  auto alone = SimulateProgram(**program, ChipV5e());
  ASSERT_TRUE(alone) << alone.error().message;
  EXPECT_EQ(alone->kernels[0].ici_seconds, 0);
  EXPECT_LT(alone->kernels[0].seconds, k.seconds);
}

TEST(CollectiveAnchorsTest, BookLatencyBoundAllGatherOfBf16_256x256) {
  DeviceProfile p = GatherOverY(256, 256, OnSlice("4x8"));
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_NEAR(p.kernels[0].seconds, 8e-6, 0.25 * 8e-6) << "model " << p.kernels[0].seconds * 1e6
                                                        << " us, measured about 8 us";
  // Most of it is the three hops and the launch, not the bytes.
  EXPECT_LT(p.kernels[0].collectives[0].transfer_seconds, p.kernels[0].collectives[0].latency_seconds);
}

TEST(CollectiveAnchorsTest, OneChipKeepsTimingCollectivesAsCopies) {
  DeviceProfile one = GatherOverY(2048, 8192, TimingOptions{});
  ASSERT_EQ(one.kernels.size(), 1u);
  EXPECT_TRUE(one.kernels[0].collectives.empty());
  EXPECT_EQ(one.kernels[0].ici_seconds, 0);
  EXPECT_EQ(one.kernels[0].tiling, "untiled");
  EXPECT_EQ(one.kernels[0].bound, Bound::kMemory);
  EXPECT_EQ(one.chips, 1);
  EXPECT_EQ(one.topology, "1x1");
  // On the slice the same kernel is far slower: ICI, not HBM, limits it.
  EXPECT_GT(GatherOverY(2048, 8192, OnSlice("4x8")).seconds, 5 * one.seconds);
}

TEST(CollectiveAnchorsTest, AsyncPairIsTimedOnceAtItsStart) {
  DeviceProfile sync = GatherOverY(2048, 8192, OnSlice("4x8"));
  DeviceProfile async = GatherOverY(2048, 8192, OnSlice("4x8"), /*async=*/true);
  ASSERT_EQ(async.kernels.size(), 2u);
  const KernelProfile& start = async.kernels[0];
  const KernelProfile& done = async.kernels[1];
  EXPECT_EQ(start.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(start.ici_seconds, sync.kernels[0].ici_seconds);
  EXPECT_TRUE(done.collectives.empty());
  EXPECT_DOUBLE_EQ(done.seconds, ChipV5e().launch_overhead_s);
  EXPECT_NEAR(async.seconds, sync.seconds + ChipV5e().launch_overhead_s, 1e-9);
}

TEST(CollectiveAnchorsTest, ProfileJsonReportsTheSliceAndTheCollective) {
  nlohmann::json j = ProfileToJson(GatherOverY(2048, 8192, OnSlice("4x8")));
  EXPECT_EQ(j["topology"], "4x8");
  EXPECT_EQ(j["chips"], 32);
  const nlohmann::json& k = j["kernels"][0];
  EXPECT_EQ(k["bound"], "ici");
  ASSERT_EQ(k["collectives"].size(), 1u);
  EXPECT_EQ(k["collectives"][0]["kind"], "all-gather");
  EXPECT_EQ(k["collectives"][0]["participants"], 4);
  EXPECT_DOUBLE_EQ(k["collectives"][0]["ici_bytes"].get<double>(), 3 * 512.0 * 8192 * 2);
  EXPECT_GT(k["ici_us"].get<double>(), 500);
  // Kernels that are not collectives carry no collective fields.
  nlohmann::json one = ProfileToJson(GatherOverY(2048, 8192, TimingOptions{}));
  EXPECT_FALSE(one["kernels"][0].contains("collectives"));
  EXPECT_EQ(one["topology"], "1x1");
}

TEST(CollectiveAnchorsTest, GroupsBeyondTheSliceAreAnErrorNamingTheKernel) {
  auto profile = SimulateProgram(
      *[] {
        ProgramBuilder b;
        uint32_t x = b.Parameter("f32[8]");
        std::string hlo = "HloModule k\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT g = f32[64] all-gather(p), "
                         "replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}\n}\n";
        return std::move(*b.Load(b.Kernel("gather", "single", hlo, {x}, {"f32[64]"})[0]));
      }(),
      ChipV5e(), OnSlice("2x2"));
  ASSERT_FALSE(profile);
  EXPECT_NE(profile.error().ToString().find("kernel gather"), std::string::npos) << profile.error().ToString();
  EXPECT_NE(profile.error().ToString().find("names replica 4, but the slice runs 4 replicas"), std::string::npos)
      << profile.error().ToString();
}

}  // namespace
}  // namespace kiln::runtime::timing
