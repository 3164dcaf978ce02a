// The published figures the timing model must reproduce (v5e unless said):
// a compute-bound and a memory-bound dot, the cost of small dot tiles, and
// fused vs unfused elementwise work; then the same programs on other chips.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

using testing::DotProgram;
using testing::ProgramBuilder;

const ChipSpec& Chip(const char* name) {
  const ChipSpec* chip = FindChip(name);
  EXPECT_NE(chip, nullptr) << name;
  return *chip;
}

DeviceProfile Simulate(const LoadedProgram& program, const char* chip, TimingOptions options = {}) {
  auto profile = SimulateProgram(program, Chip(chip), options);
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? *profile : DeviceProfile{};
}

constexpr const char* kSquare = "bf16[8192,8192]";
constexpr const char* kSkinny = "bf16[128,8192]";

TEST(TimingFiguresTest, BigSquareDotIsComputeBound) {
  auto program = DotProgram(kSquare, kSquare, kSquare);
  ASSERT_TRUE(program) << program.error().message;
  DeviceProfile p = Simulate(**program, "v5e");
  const double roofline = std::max(2.0 * 8192 * 8192 * 8192 / 1.97e14, 3 * 2.0 * 8192 * 8192 / 8.19e11);
  EXPECT_NEAR(p.seconds, roofline, 0.10 * roofline) << "roofline 5.58 ms";
  EXPECT_NEAR(p.seconds, 6.05e-3, 0.15 * 6.05e-3) << "XLA's measured 6.05 ms";
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(p.kernels[0].flops, 2.0 * 8192 * 8192 * 8192);
  EXPECT_GT(p.kernels[0].mxu_utilization, 0.85);
}

TEST(TimingFiguresTest, SkinnyDotIsMemoryBound) {
  auto program = DotProgram(kSkinny, kSquare, kSkinny);
  ASSERT_TRUE(program) << program.error().message;
  DeviceProfile p = Simulate(**program, "v5e");
  const double bytes = 2.0 * (128 * 8192 + 8192 * 8192 + 128 * 8192);
  EXPECT_NEAR(p.seconds, bytes / 8.19e11, 0.10 * 169e-6) << "about 169 us";
  EXPECT_EQ(p.kernels[0].bound, Bound::kMemory);
  // The lhs block is fetched once: traffic is the arrays themselves.
  EXPECT_NEAR(p.kernels[0].bytes, bytes, 0.02 * bytes);
}

TEST(TimingFiguresTest, SmallDotTilesAreTenTimesSlower) {
  auto program = DotProgram(kSquare, kSquare, kSquare);
  ASSERT_TRUE(program) << program.error().message;
  TimingOptions small, large;
  small.dot_tiles = DotTiles{128, 128, 128};
  large.dot_tiles = DotTiles{512, 1024, 1024};
  DeviceProfile slow = Simulate(**program, "v5e", small);
  DeviceProfile fast = Simulate(**program, "v5e", large);
  EXPECT_GE(slow.seconds, 10 * fast.seconds) << slow.seconds << " vs " << fast.seconds;
  EXPECT_NEAR(fast.seconds, 6e-3, 0.10 * 6e-3) << "published: about 6 ms";
  EXPECT_NEAR(slow.seconds, 91.8e-3, 0.35 * 91.8e-3) << "published: 91.8 ms";
  EXPECT_DOUBLE_EQ(slow.kernels[0].grid_steps, 64.0 * 64 * 64);
  EXPECT_EQ(slow.kernels[0].bound, Bound::kOverhead);
}

TEST(TimingFiguresTest, ForcedDotTilesOverVmemAreAnError) {
  auto program = DotProgram(kSquare, kSquare, kSquare);
  ASSERT_TRUE(program) << program.error().message;
  TimingOptions options;
  options.dot_tiles = DotTiles{4096, 4096, 4096};
  auto p = SimulateProgram(**program, Chip("v5e"), options);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("scoped VMEM"), std::string::npos) << p.error().message;
}

TEST(TimingFiguresTest, ExecutableTilingIsHonoured) {
  ProgramTiling tiling;
  tiling.grid = {1, 64, 64, 64};  // 128 x 128 x 128 blocks
  auto program = DotProgram(kSquare, kSquare, kSquare, "", tiling);
  ASSERT_TRUE(program) << program.error().message;
  DeviceProfile given = Simulate(**program, "v5e");
  TimingOptions forced;
  forced.dot_tiles = DotTiles{128, 128, 128};
  DeviceProfile expected = Simulate(**program, "v5e", forced);
  EXPECT_DOUBLE_EQ(given.seconds, expected.seconds);
  EXPECT_NE(given.kernels[0].tiling.find("executable"), std::string::npos) << given.kernels[0].tiling;
}

// A batched dot whose blocks stack whole GEMMs: fewer grid steps, every
// stacked GEMM's MXU work counted in its step, and the MXUs one small GEMM
// leaves idle taking the next ones' weight tiles.
TEST(TimingFiguresTest, StackedBatchBlocksCountEveryGemm) {
  const std::string lhs = "bf16[48,128,128]", rhs = "bf16[48,128,64]", out = "bf16[48,128,64]";
  const std::string text = "HloModule scores\nENTRY e {\n  q = " + lhs + " parameter(0)\n  k = " + rhs +
                           " parameter(1)\n  ROOT s = " + out +
                           " dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                           "rhs_contracting_dims={1}\n}\n";
  auto timed = [&](int64_t blocks) {
    ProgramTiling tiling;
    tiling.grid = {blocks, 1, 1, 1};
    ProgramBuilder b;
    uint32_t q = b.Parameter(lhs), k = b.Parameter(rhs);
    uint32_t s = b.Kernel("dot", "output", text, {q, k}, {out}, tiling)[0];
    auto program = b.Load(s);
    EXPECT_TRUE(program) << program.error().message;
    return program ? Simulate(**program, "v5e") : DeviceProfile{};
  };
  const DeviceProfile one = timed(48), twelve = timed(4), all = timed(1);
  ASSERT_EQ(one.kernels.size(), 1u);
  ASSERT_EQ(twelve.kernels.size(), 1u);
  ASSERT_EQ(all.kernels.size(), 1u);
  EXPECT_NE(twelve.kernels[0].tiling.find("executable"), std::string::npos) << twelve.kernels[0].tiling;
  EXPECT_DOUBLE_EQ(one.kernels[0].grid_steps, 48);
  EXPECT_DOUBLE_EQ(twelve.kernels[0].grid_steps, 4);
  EXPECT_DOUBLE_EQ(all.kernels[0].grid_steps, 1);
  // v5e: four 128x128 MXUs. One head's GEMM is one weight tile, a round of
  // 128 rows; stacked twelve to a step, four heads share a round.
  const double flops = 48 * 2.0 * 128 * 128 * 64;
  for (const DeviceProfile* p : {&one, &twelve, &all}) {
    EXPECT_GE(p->kernels[0].compute_seconds, flops / 1.97e14 * 0.99) << "every head's MXU work is counted";
  }
  EXPECT_NEAR(one.kernels[0].compute_seconds, 4 * twelve.kernels[0].compute_seconds,
              1e-3 * one.kernels[0].compute_seconds);
  EXPECT_LT(twelve.seconds, one.seconds / 2) << twelve.seconds << " vs " << one.seconds;
}

// Strict tiling times the carried tile or refuses: a grid that does not fit
// the kernel's space is an error naming the kernel, while the default mode
// still times it with searched blocks, exactly as before.
TEST(TimingFiguresTest, StrictTilingRejectsACarriedTileThatDoesNotFit) {
  ProgramTiling mismatched;
  mismatched.grid = {1, 64, 64};  // three grid dimensions for a four-dimensional GEMM space
  auto program = DotProgram(kSquare, kSquare, kSquare, "", mismatched);
  ASSERT_TRUE(program) << program.error().message;
  TimingOptions strict;
  strict.strict_tiling = true;
  auto refused = SimulateProgram(**program, Chip("v5e"), strict);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().ToString().find("kernel dot"), std::string::npos) << refused.error().ToString();
  EXPECT_NE(refused.error().ToString().find("[1,64,64]"), std::string::npos) << refused.error().ToString();

  DeviceProfile lenient = Simulate(**program, "v5e");
  auto unforced = DotProgram(kSquare, kSquare, kSquare);
  ASSERT_TRUE(unforced);
  EXPECT_DOUBLE_EQ(lenient.seconds, Simulate(**unforced, "v5e").seconds);
  EXPECT_NE(lenient.kernels[0].tiling.find("default"), std::string::npos) << lenient.kernels[0].tiling;

  // A tile that fits is timed the same with or without strictness, and a
  // kernel carrying no tiling is still timed with searched blocks.
  ProgramTiling fitting;
  fitting.grid = {1, 64, 64, 64};
  auto exact = DotProgram(kSquare, kSquare, kSquare, "", fitting);
  ASSERT_TRUE(exact);
  auto strict_exact = SimulateProgram(**exact, Chip("v5e"), strict);
  ASSERT_TRUE(strict_exact) << strict_exact.error().message;
  EXPECT_DOUBLE_EQ(strict_exact->seconds, Simulate(**exact, "v5e").seconds);
  auto strict_untiled = SimulateProgram(**unforced, Chip("v5e"), strict);
  ASSERT_TRUE(strict_untiled) << strict_untiled.error().message;
  EXPECT_DOUBLE_EQ(strict_untiled->seconds, lenient.seconds);
}

// relu(x * a + b), f32[8192,8192], scalar a and b.
constexpr const char* kBig = "f32[8192,8192]";

std::unique_ptr<LoadedProgram> FusedRelu() {
  ProgramBuilder b;
  uint32_t x = b.Parameter(kBig), a = b.Parameter("f32[]"), c = b.Parameter("f32[]");
  std::string hlo =
      "HloModule relu\nENTRY e {\n  x = f32[8192,8192] parameter(0)\n  a = f32[] parameter(1)\n"
      "  b = f32[] parameter(2)\n  ab = f32[8192,8192] broadcast(a), dimensions={}\n"
      "  bb = f32[8192,8192] broadcast(b), dimensions={}\n  m = f32[8192,8192] multiply(x, ab)\n"
      "  s = f32[8192,8192] add(m, bb)\n  z = f32[] constant(0)\n"
      "  zb = f32[8192,8192] broadcast(z), dimensions={}\n  ROOT r = f32[8192,8192] maximum(s, zb)\n}\n";
  uint32_t r = b.Kernel("fusion", "loop", hlo, {x, a, c}, {kBig})[0];
  auto loaded = b.Load(r);
  EXPECT_TRUE(loaded) << loaded.error().message;
  return loaded ? std::move(*loaded) : nullptr;
}

// The same computation with every instruction its own kernel (plan `none`).
std::unique_ptr<LoadedProgram> UnfusedRelu() {
  ProgramBuilder b;
  uint32_t x = b.Parameter(kBig), a = b.Parameter("f32[]"), c = b.Parameter("f32[]");
  auto broadcast = [&](const std::string& name, uint32_t scalar) {
    std::string hlo = "HloModule " + name + "\nENTRY e {\n  p = f32[] parameter(0)\n"
                      "  ROOT r = f32[8192,8192] broadcast(p), dimensions={}\n}\n";
    return b.Kernel(name, "single", hlo, {scalar}, {kBig})[0];
  };
  auto binary = [&](const std::string& name, const std::string& op, uint32_t l, uint32_t r) {
    std::string hlo = "HloModule " + name + "\nENTRY e {\n  l = f32[8192,8192] parameter(0)\n"
                      "  r = f32[8192,8192] parameter(1)\n  ROOT o = f32[8192,8192] " + op +
                      "(l, r)\n}\n";
    return b.Kernel(name, "single", hlo, {l, r}, {kBig})[0];
  };
  uint32_t ab = broadcast("broadcast.a", a);
  uint32_t m = binary("multiply", "multiply", x, ab);
  uint32_t bb = broadcast("broadcast.b", c);
  uint32_t s = binary("add", "add", m, bb);
  uint32_t zb = b.Kernel("broadcast.zero", "single",
                         "HloModule z\nENTRY e {\n  z = f32[] constant(0)\n"
                         "  ROOT r = f32[8192,8192] broadcast(z), dimensions={}\n}\n",
                         {}, {kBig})[0];
  uint32_t r = binary("maximum", "maximum", s, zb);
  auto loaded = b.Load(r);
  EXPECT_TRUE(loaded) << loaded.error().message;
  return loaded ? std::move(*loaded) : nullptr;
}

TEST(TimingFiguresTest, FusedEltwiseIsHbmBound) {
  auto fused = FusedRelu();
  ASSERT_NE(fused, nullptr);
  DeviceProfile p = Simulate(*fused, "v5e");
  EXPECT_NEAR(p.seconds, 0.65e-3, 0.10 * 0.65e-3);
  EXPECT_EQ(p.kernels[0].bound, Bound::kMemory);
}

TEST(TimingFiguresTest, UnfusedEltwisePaysForEveryIntermediate) {
  auto unfused = UnfusedRelu();
  ASSERT_NE(unfused, nullptr);
  DeviceProfile p = Simulate(*unfused, "v5e");
  EXPECT_GE(p.seconds, 1.96e-3);
  EXPECT_EQ(p.kernels.size(), 6u);
  auto fused = FusedRelu();
  ASSERT_NE(fused, nullptr);
  EXPECT_GT(p.seconds, 3 * Simulate(*fused, "v5e").seconds);
}

// Each chip's own figures: peak FLOP/s for the square dot, HBM bandwidth for
// the skinny one and the elementwise kernel.
class ChipScalingTest : public ::testing::TestWithParam<const char*> {};

// Mosaic's default scoped VMEM on v6e is 32 MiB (16 MiB on the others); with
// 16 MiB the largest bf16 dot blocks (1024^3) fall below v6e's ridge point
// and the dot turns memory-bound (1.46 ms against 1.20 ms).
TimingOptions ChipOptions(const char* chip) {
  TimingOptions options;
  if (std::string(chip) == "v6e") options.scoped_vmem_bytes = 32 << 20;
  return options;
}

TEST_P(ChipScalingTest, SquareDotFollowsPeakFlops) {
  const ChipSpec& chip = Chip(GetParam());
  auto program = DotProgram(kSquare, kSquare, kSquare);
  ASSERT_TRUE(program) << program.error().message;
  double expected = std::max(2.0 * 8192 * 8192 * 8192 / chip.bf16_flops,
                             3 * 2.0 * 8192 * 8192 / chip.hbm_bytes_per_s);
  DeviceProfile p = Simulate(**program, GetParam(), ChipOptions(GetParam()));
  EXPECT_GE(p.seconds, expected);
  EXPECT_NEAR(p.seconds, expected, 0.10 * expected);
}

TEST_P(ChipScalingTest, SkinnyDotFollowsBandwidth) {
  const ChipSpec& chip = Chip(GetParam());
  auto program = DotProgram(kSkinny, kSquare, kSkinny);
  ASSERT_TRUE(program) << program.error().message;
  double expected = 2.0 * (128 * 8192 + 8192 * 8192 + 128 * 8192) / chip.hbm_bytes_per_s;
  DeviceProfile p = Simulate(**program, GetParam());
  EXPECT_GE(p.seconds, expected);
  EXPECT_NEAR(p.seconds, expected, 0.10 * expected);
}

TEST_P(ChipScalingTest, FusedEltwiseFollowsBandwidth) {
  const ChipSpec& chip = Chip(GetParam());
  auto fused = FusedRelu();
  ASSERT_NE(fused, nullptr);
  double expected = 2 * 4.0 * 8192 * 8192 / chip.hbm_bytes_per_s;
  DeviceProfile p = Simulate(*fused, GetParam());
  EXPECT_GE(p.seconds, expected);
  EXPECT_NEAR(p.seconds, expected, 0.10 * expected);
}

INSTANTIATE_TEST_SUITE_P(Chips, ChipScalingTest, ::testing::Values("v4", "v5e", "v5p", "v6e"));

}  // namespace
}  // namespace kiln::runtime::timing
