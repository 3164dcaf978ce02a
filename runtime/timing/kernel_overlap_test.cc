// A program's collective kernels on a slice run on the ICI links beside the
// compute kernels that do not wait for them (ProgramTimer::Assemble), as
// XLA's async collectives do; on one chip, and for kernels that read a
// collective's result, kernels run end to end.
#include <gtest/gtest.h>

#include <string>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/profile_output.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

using testing::ProgramBuilder;

const ChipSpec& OverlapTestChip() { return *FindChip("v5e"); }

// An all-gather over 4 chips, a matmul that does not read it, then a
// kernel that reads both.
DeviceProfile GatherBesideMatmul(const TimingOptions& options) {
  ProgramBuilder b;
  uint32_t shard = b.Parameter("bf16[512,8192]");
  uint32_t y = b.Parameter("f32[1024,1024]");
  uint32_t gathered = b.Kernel("all-gather", "single",
                               "HloModule k\nENTRY e {\n  p = bf16[512,8192] parameter(0)\n"
                               "  ROOT g = bf16[2048,8192] all-gather(p), channel_id=1, replica_groups=[8,4]<=[32], "
                               "dimensions={0}, use_global_device_ids=true\n}\n",
                               {shard}, {"bf16[2048,8192]"})[0];
  uint32_t product = b.Kernel("dot", "output",
                              "HloModule k\nENTRY e {\n  y = f32[1024,1024] parameter(0)\n"
                              "  ROOT d = f32[1024,1024] dot(y, y), lhs_contracting_dims={1}, "
                              "rhs_contracting_dims={0}\n}\n",
                              {y}, {"f32[1024,1024]"})[0];
  uint32_t out = b.Kernel("sum", "loop",
                          "HloModule k\nENTRY e {\n  g = bf16[2048,8192] parameter(0)\n"
                          "  z = f32[1024,1024] parameter(1)\n"
                          "  s = bf16[1024,1024] slice(g), slice={[0:1024], [0:1024]}\n"
                          "  c = f32[1024,1024] convert(s)\n  ROOT r = f32[1024,1024] add(z, c)\n}\n",
                          {gathered, product}, {"f32[1024,1024]"})[0];
  auto program = b.Load(out);
  EXPECT_TRUE(program) << program.error().message;
  if (!program) return {};
  auto profile = SimulateProgram(**program, OverlapTestChip(), options);
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? *profile : DeviceProfile{};
}

TEST(KernelOverlapTest, ACollectiveKernelRunsBesideComputeThatDoesNotReadIt) {
  TimingOptions options;
  auto topology = ParseTopology("4x8", OverlapTestChip());
  ASSERT_TRUE(topology) << topology.error().message;
  options.topology = *topology;
  DeviceProfile p = GatherBesideMatmul(options);
  ASSERT_EQ(p.kernels.size(), 3u);
  const KernelProfile& gather = p.kernels[0];
  const KernelProfile& dot = p.kernels[1];
  const KernelProfile& sum = p.kernels[2];
  EXPECT_TRUE(gather.on_links);
  EXPECT_FALSE(dot.on_links);
  // The matmul starts with the gather instead of after it; the kernel that
  // reads both waits for the later of the two.
  EXPECT_DOUBLE_EQ(gather.start_seconds, 0);
  EXPECT_DOUBLE_EQ(dot.start_seconds, 0);
  EXPECT_DOUBLE_EQ(sum.start_seconds, std::max(gather.seconds, dot.seconds));
  EXPECT_DOUBLE_EQ(p.seconds, sum.start_seconds + sum.seconds);
  EXPECT_LT(p.seconds, gather.seconds + dot.seconds + sum.seconds);
  // The trace puts the collective on a track of its own.
  const std::string trace = ChromeTraceJson(p).dump();
  EXPECT_NE(trace.find("\"ICI\""), std::string::npos);
}

TEST(KernelOverlapTest, OnOneChipKernelsRunEndToEnd) {
  DeviceProfile p = GatherBesideMatmul(TimingOptions{});
  ASSERT_EQ(p.kernels.size(), 3u);
  double sum = 0;
  for (const KernelProfile& k : p.kernels) {
    EXPECT_FALSE(k.on_links);
    EXPECT_DOUBLE_EQ(k.start_seconds, sum);
    sum += k.seconds;
  }
  EXPECT_DOUBLE_EQ(p.seconds, sum);
}

}  // namespace
}  // namespace kiln::runtime::timing
