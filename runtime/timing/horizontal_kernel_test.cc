// A horizontal kernel (parts of different shapes, fused by the autotuner)
// has no common grid: it is timed untiled, one launch reading, computing
// and writing its whole arrays, so it saves the launches of the kernels it
// replaces and nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

using testing::ProgramBuilder;

constexpr char kWideArray[] = "f32[1024,512]";
constexpr char kNarrowArray[] = "f32[64]";

const std::string kWidePart = R"(
HloModule big
ENTRY e {
  a = f32[1024,512] parameter(0)
  b = f32[1024,512] parameter(1)
  ROOT s = f32[1024,512] add(a, b)
})";

const std::string kNarrowPart = R"(
HloModule small
ENTRY e {
  c = f32[64] parameter(0)
  ROOT m = f32[64] multiply(c, c)
})";

const std::string kWideAndNarrowParts = R"(
HloModule both
ENTRY e {
  a = f32[1024,512] parameter(0)
  b = f32[1024,512] parameter(1)
  c = f32[64] parameter(2)
  s = f32[1024,512] add(a, b)
  m = f32[64] multiply(c, c)
  ROOT t = (f32[1024,512], f32[64]) tuple(s, m)
})";

// Every kernel of the program `build` makes, timed on v5e.
template <typename Build>
std::vector<KernelProfile> TimeKernelsOf(const Build& build) {
  ProgramBuilder b;
  uint32_t result = build(b);
  auto loaded = b.Load(result);
  EXPECT_TRUE(loaded) << loaded.error().message;
  if (!loaded) return {};
  auto profile = SimulateProgram(**loaded, *FindChip("v5e"));
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? profile->kernels : std::vector<KernelProfile>{};
}

TEST(HorizontalKernelTest, PartsOfDifferentShapesRunUntiledInOneLaunch) {
  const ChipSpec& chip = *FindChip("v5e");
  std::vector<KernelProfile> apart = TimeKernelsOf([](ProgramBuilder& b) {
    uint32_t a = b.Parameter(kWideArray), x = b.Parameter(kWideArray), c = b.Parameter(kNarrowArray);
    b.Kernel("big", "loop", kWidePart, {a, x}, {kWideArray});
    return b.Kernel("small", "loop", kNarrowPart, {c}, {kNarrowArray})[0];
  });
  std::vector<KernelProfile> merged = TimeKernelsOf([](ProgramBuilder& b) {
    uint32_t a = b.Parameter(kWideArray), x = b.Parameter(kWideArray), c = b.Parameter(kNarrowArray);
    return b.Kernel("both", "horizontal", kWideAndNarrowParts, {a, x, c}, {kWideArray, kNarrowArray})[0];
  });
  ASSERT_EQ(apart.size(), 2u);
  ASSERT_EQ(merged.size(), 1u);
  const KernelProfile& h = merged[0];
  EXPECT_EQ(h.tiling, "untiled");
  // Every byte of both parts is still moved, once.
  EXPECT_DOUBLE_EQ(h.ideal_bytes, apart[0].ideal_bytes + apart[1].ideal_bytes);
  EXPECT_DOUBLE_EQ(h.bytes, h.ideal_bytes);
  // One launch and one step, then the bytes at HBM bandwidth and the adds
  // on the vector unit, one after the other: whole arrays, single
  // buffered, nothing overlaps.
  EXPECT_EQ(h.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(h.overhead_seconds, chip.launch_overhead_s + chip.step_overhead_s);
  EXPECT_DOUBLE_EQ(h.memory_seconds, h.bytes / chip.hbm_bytes_per_s);
  EXPECT_GT(h.compute_seconds, 0);
  EXPECT_DOUBLE_EQ(h.seconds, h.overhead_seconds + h.memory_seconds + h.compute_seconds);
  // Against the parts apart it saves less than the launch and step it
  // removes, and most of a launch.
  const double saved = apart[0].seconds + apart[1].seconds - h.seconds;
  EXPECT_LT(saved, chip.launch_overhead_s + chip.step_overhead_s) << apart[0].tiling;
  EXPECT_GE(saved, 0.5 * chip.launch_overhead_s);
}

}  // namespace
}  // namespace kiln::runtime::timing
