// A kernel's HBM traffic is its operands and results once, plus only the
// re-reads its grid really makes: operands transposed, broadcast or
// reshaped relative to the iteration space are read slice by slice, and a
// dot's panels are re-read and reported as such.
#include <gtest/gtest.h>

#include <string>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {
namespace {

using testing::DotProgram;
using testing::ProgramBuilder;

const ChipSpec& V5eChip() { return *FindChip("v5e"); }

// The profile of a one-kernel program: `hlo` reads `inputs` (shapes of
// parameters 0, 1, ...) and writes `output`.
KernelProfile TimeOne(const std::string& hlo, const std::vector<std::string>& inputs, const std::string& output,
                      const std::string& kind = "loop") {
  ProgramBuilder b;
  std::vector<uint32_t> buffers;
  for (const std::string& shape : inputs) buffers.push_back(b.Parameter(shape));
  uint32_t out = b.Kernel("k", kind, hlo, buffers, {output})[0];
  auto loaded = b.Load(out);
  EXPECT_TRUE(loaded) << loaded.error().message;
  if (!loaded) return {};
  auto profile = SimulateProgram(**loaded, V5eChip());
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? profile->kernels.at(0) : KernelProfile{};
}

TEST(KernelTrafficTest, TransposedOperandIsReadOnce) {
  // Positionally, x's 4096 rows never line up with the space's [4096, 8,
  // 256]: every block used to read all of them (4096 blocks x 32 MiB).
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = f32[8,4096,256] parameter(0)
  y = f32[4096,8,256] parameter(1)
  t = f32[4096,8,256] transpose(x), dimensions={1,0,2}
  ROOT a = f32[4096,8,256] add(t, y)
})";
  KernelProfile p = TimeOne(hlo, {"f32[8,4096,256]", "f32[4096,8,256]"}, "f32[4096,8,256]");
  const double array = 4.0 * 8 * 4096 * 256;
  EXPECT_DOUBLE_EQ(p.ideal_bytes, 3 * array);
  EXPECT_LE(p.bytes, 1.05 * p.ideal_bytes) << p.tiling;
  EXPECT_TRUE(p.rereads.empty()) << p.tiling;
  EXPECT_EQ(p.bound, Bound::kMemory) << p.tiling;
  EXPECT_NEAR(p.seconds, p.ideal_bytes / V5eChip().hbm_bytes_per_s, 0.10 * p.seconds);
}

TEST(KernelTrafficTest, LeadingDimensionsStackIntoLargeBlocks) {
  // The two minor dimensions hold one (16,128) tile: blocks of that tile
  // alone would take 32,768 grid steps, and the kernel would be bound by
  // step overhead instead of writing 128 MiB.
  const std::string hlo = R"(
HloModule k
ENTRY e {
  c = bf16[] parameter(0)
  ROOT b = bf16[4,16,512,16,128] broadcast(c), dimensions={}
})";
  KernelProfile p = TimeOne(hlo, {"bf16[]"}, "bf16[4,16,512,16,128]");
  EXPECT_EQ(p.bound, Bound::kMemory) << p.tiling;
  EXPECT_LT(p.grid_steps, 1024) << p.tiling;
  EXPECT_NEAR(p.seconds, p.ideal_bytes / V5eChip().hbm_bytes_per_s, 0.10 * p.seconds) << p.tiling;
}

TEST(KernelTrafficTest, ReduceOverATransposedInputReadsItOnce) {
  const std::string hlo = R"(
HloModule k
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,4096] parameter(0)
  t = f32[4096,1024] transpose(x), dimensions={1,0}
  z = f32[] constant(0)
  ROOT r = f32[4096] reduce(t, z), dimensions={1}, to_apply=add
})";
  KernelProfile p = TimeOne(hlo, {"f32[1024,4096]"}, "f32[4096]", "input");
  EXPECT_DOUBLE_EQ(p.ideal_bytes, 4.0 * 1024 * 4096 + 4.0 * 4096);
  EXPECT_LE(p.bytes, 1.05 * p.ideal_bytes) << p.tiling;
  EXPECT_TRUE(p.rereads.empty()) << p.tiling;
  // Positionally no dimension of x lines up with the space, so every block
  // held all of x: 16 MiB double-buffered, over the scoped VMEM.
  EXPECT_EQ(p.tiling.find("over scoped VMEM"), std::string::npos) << p.tiling;
}

TEST(KernelTrafficTest, BroadcastOperandIsReadPerBlockOfWhatItKeeps) {
  // A row vector broadcast over rows: read with the columns it follows.
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = f32[4096,4096] parameter(0)
  v = f32[4096] parameter(1)
  b = f32[4096,4096] broadcast(v), dimensions={1}
  ROOT a = f32[4096,4096] add(x, b)
})";
  KernelProfile p = TimeOne(hlo, {"f32[4096,4096]", "f32[4096]"}, "f32[4096,4096]");
  EXPECT_LE(p.bytes, 1.05 * p.ideal_bytes) << p.tiling;
}

TEST(KernelTrafficTest, ReshapedOperandFollowsTheDimensionsItSplits) {
  // Heads split out of the minor dimension: [64, 2048, 1024] read as
  // [64, 2048, 8, 128] and transposed to [64, 8, 2048, 128].
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = bf16[64,2048,1024] parameter(0)
  r = bf16[64,2048,8,128] reshape(x)
  ROOT t = bf16[64,8,2048,128] transpose(r), dimensions={0,2,1,3}
})";
  KernelProfile p = TimeOne(hlo, {"bf16[64,2048,1024]"}, "bf16[64,8,2048,128]");
  EXPECT_DOUBLE_EQ(p.ideal_bytes, 2 * 2.0 * 64 * 2048 * 1024);
  EXPECT_LE(p.bytes, 1.05 * p.ideal_bytes) << p.tiling;
}

TEST(KernelTrafficTest, DotPanelsAreCountedAsRereads) {
  // 8192^3 in 512 x 1024 x 1024 blocks: the lhs is read once per column of
  // blocks (8192 / 1024 = 8 times), the rhs once per row (8192 / 512 = 16).
  auto program = DotProgram("bf16[8192,8192]", "bf16[8192,8192]", "bf16[8192,8192]");
  ASSERT_TRUE(program) << program.error().message;
  TimingOptions options;
  options.dot_tiles = DotTiles{512, 1024, 1024};
  auto profile = SimulateProgram(**program, V5eChip(), options);
  ASSERT_TRUE(profile) << profile.error().message;
  const KernelProfile& p = profile->kernels.at(0);
  const double array = 2.0 * 8192 * 8192;
  EXPECT_DOUBLE_EQ(p.ideal_bytes, 3 * array);
  ASSERT_EQ(p.rereads.size(), 2u);
  EXPECT_EQ(p.rereads[0].input, 0);
  EXPECT_NEAR(p.rereads[0].times, 8, 1e-9);
  EXPECT_EQ(p.rereads[1].input, 1);
  EXPECT_NEAR(p.rereads[1].times, 16, 1e-9);
  EXPECT_NEAR(p.bytes, (8 + 16 + 1) * array, 1e-6 * array);
}

TEST(KernelTrafficTest, TransposedWeightIsTiledAsItIsLaidOut) {
  // The rhs arrives as [n, k] = [64, 8192] and is transposed for the dot:
  // read as [64, 8192] it needs no lane padding; as a [k, n] = [8192, 64]
  // panel it would pad 64 lanes to 128 and double its bytes.
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = bf16[256,8192] parameter(0)
  w = bf16[64,8192] parameter(1)
  wt = bf16[8192,64] transpose(w), dimensions={1,0}
  ROOT d = bf16[256,64] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  KernelProfile p = TimeOne(hlo, {"bf16[256,8192]", "bf16[64,8192]"}, "bf16[256,64]", "output");
  const double ideal = 2.0 * (256 * 8192 + 64 * 8192) + 2.0 * 256 * 128;
  EXPECT_DOUBLE_EQ(p.ideal_bytes, ideal);
  EXPECT_LE(p.bytes, 1.05 * ideal) << p.tiling;
}

TEST(KernelTrafficTest, LayoutsDecideTheTiledDimensions) {
  // f32[1000,8]{0,1} lies in memory as [8, 1000]: 8 rows of 1000 lanes (pads
  // to 1024), not 1000 rows of 8 lanes (which would pad to 128).
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = f32[1000,8]{0,1} parameter(0)
  ROOT n = f32[1000,8]{0,1} negate(x)
})";
  KernelProfile p = TimeOne(hlo, {"f32[1000,8]{0,1}"}, "f32[1000,8]{0,1}");
  EXPECT_DOUBLE_EQ(p.ideal_bytes, 2 * 4.0 * 8 * 1024);
  EXPECT_DOUBLE_EQ(p.bytes, p.ideal_bytes) << p.tiling;
}

// A convolution's rows (batch x spatial) are written in its result's memory
// order: with features minor and the batch next (the TPU's layout for NCHW,
// {1,0,3,2}), each block of rows fills whole (batch, feature) tiles. Taken
// in logical order (batch major, width minor), each row of a block landed
// in another tile row, and every tile was written 8 times.
TEST(KernelTrafficTest, ConvolutionRowsFollowTheResultsLayout) {
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = f32[96,128,28,28]{1,0,3,2} parameter(0)
  w = f32[256,128,1,1] parameter(1)
  ROOT c = f32[96,256,28,28]{1,0,3,2} convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01
})";
  KernelProfile p = TimeOne(hlo, {"f32[96,128,28,28]{1,0,3,2}", "f32[256,128,1,1]"}, "f32[96,256,28,28]{1,0,3,2}",
                            "output");
  const double out = 4.0 * 96 * 256 * 28 * 28;
  const double in = 4.0 * 96 * 128 * 28 * 28;
  const double weights = 4.0 * 256 * 128;  // its 1x1 taps hold no data: [256,128] tiles
  EXPECT_DOUBLE_EQ(p.ideal_bytes, out + in + weights);
  EXPECT_LE(p.bytes, 1.10 * p.ideal_bytes) << p.tiling;
}

// A weight gradient sums every input position into its one output
// position per filter tap: its kernel reads the whole activation, not one
// row of features per output row (which counted 64 KiB of a 4 MiB input).
TEST(KernelTrafficTest, AWeightGradientReadsItsWholeInput) {
  const std::string hlo = R"(
HloModule k
ENTRY e {
  x = f32[8,32,32,128] parameter(0)
  g = f32[8,32,32,256] parameter(1)
  ROOT dw = f32[1,1,128,256] convolution(x, g), window={size=32x32}, dim_labels=f01b_i01o->01bf
})";
  KernelProfile p = TimeOne(hlo, {"f32[8,32,32,128]", "f32[8,32,32,256]"}, "f32[1,1,128,256]", "output");
  const double x = 4.0 * 8 * 32 * 32 * 128, g = 4.0 * 8 * 32 * 32 * 256, dw = 4.0 * 128 * 256;
  EXPECT_DOUBLE_EQ(p.ideal_bytes, x + g + dw);
  EXPECT_GE(p.bytes, 0.95 * p.ideal_bytes) << p.tiling;
  EXPECT_LE(p.bytes, 1.10 * p.ideal_bytes) << p.tiling;
}

// Each operand spans a quarter of the space's columns: it is moved by the
// blocks that land on it, not by every block of the row.
TEST(KernelTrafficTest, ConcatenateOperandsAreReadOnlyWhereTheyLand) {
  const std::string hlo = R"(
HloModule k
ENTRY e {
  a = f32[4096,1024] parameter(0)
  b = f32[4096,1024] parameter(1)
  c = f32[4096,1024] parameter(2)
  d = f32[4096,1024] parameter(3)
  ROOT cat = f32[4096,4096] concatenate(a, b, c, d), dimensions={1}
})";
  KernelProfile p = TimeOne(hlo, {"f32[4096,1024]", "f32[4096,1024]", "f32[4096,1024]", "f32[4096,1024]"},
                            "f32[4096,4096]");
  EXPECT_DOUBLE_EQ(p.ideal_bytes, 2 * 4.0 * 4096 * 4096);
  EXPECT_LE(p.bytes, 1.05 * p.ideal_bytes) << p.tiling;
}

TEST(KernelTrafficTest, ProfileTotalsCarryIdealBytesAndHfu) {
  auto program = DotProgram("bf16[8192,8192]", "bf16[8192,8192]", "bf16[8192,8192]");
  ASSERT_TRUE(program) << program.error().message;
  auto profile = SimulateProgram(**program, V5eChip());
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_DOUBLE_EQ(profile->ideal_bytes, profile->kernels.at(0).ideal_bytes);
  EXPECT_EQ(profile->chips, 1);
  EXPECT_DOUBLE_EQ(profile->hfu, profile->flops / (profile->seconds * V5eChip().bf16_flops));
  EXPECT_GT(profile->hfu, 0.85);
  EXPECT_LE(profile->hfu, 1.0);
}

TEST(KernelTrafficTest, HfuMeasuresFp8WorkAgainstTheFp8Peak) {
  // TPU7x runs fp8 products at twice its bf16 rate: an fp8 dot takes about
  // half the time of a bf16 one and is as well used, not twice as well.
  const ChipSpec& tpu7x = *FindChip("tpu7x");
  auto bf16 = DotProgram("bf16[8192,8192]", "bf16[8192,8192]", "bf16[8192,8192]");
  auto fp8 = DotProgram("f8e4m3fn[8192,8192]", "f8e4m3fn[8192,8192]", "bf16[8192,8192]");
  ASSERT_TRUE(bf16 && fp8);
  auto b = SimulateProgram(**bf16, tpu7x);
  auto f = SimulateProgram(**fp8, tpu7x);
  ASSERT_TRUE(b && f);
  EXPECT_LT(f->seconds, 0.6 * b->seconds);
  EXPECT_GT(f->hfu, 0.7);
  EXPECT_LE(f->hfu, 1.0);
  EXPECT_NEAR(f->hfu, f->flops / (f->seconds * tpu7x.fp8_flops), 0.01);
}

}  // namespace
}  // namespace kiln::runtime::timing
