// Unit tests of the timing model's parts: tile padding, MXU passes, block
// reuse in the grid, traffic by element type, options parsing.
#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/timing/grid_model.h"
#include "runtime/timing/mxu_model.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

const ChipSpec& V5e() { return *FindChip("v5e"); }

Contraction Gemm(int64_t m, int64_t n, int64_t k, hlo::PrimitiveType type, int passes = 1) {
  Contraction c;
  c.gemm = {1, m, n, k};
  c.lhs_type = c.rhs_type = type;
  c.passes = passes;
  return c;
}

TEST(TpuTilesTest, PadsMinorDimensionsToTypeTiles) {
  using hlo::PrimitiveType;
  EXPECT_EQ(PaddedBlockBytes(PrimitiveType::kF32, 1, 100, 100), 104.0 * 128 * 4);
  EXPECT_EQ(PaddedBlockBytes(PrimitiveType::kBF16, 1, 100, 100), 112.0 * 128 * 2);
  EXPECT_EQ(PaddedBlockBytes(PrimitiveType::kS8, 1, 100, 100), 128.0 * 128 * 1);
  EXPECT_EQ(PaddedArrayBytes(hlo::Shape(PrimitiveType::kF32, {3, 100, 100})), 3 * 104.0 * 128 * 4);
  EXPECT_EQ(PaddedArrayBytes(hlo::Shape(PrimitiveType::kF32, {})), 8.0 * 128 * 4);
  EXPECT_EQ(PaddedArrayBytes(hlo::Shape(PrimitiveType::kF32, {1025})), 2 * 8.0 * 128 * 4);
  EXPECT_EQ(PaddedVectorElements(hlo::Shape(PrimitiveType::kBF16, {10, 200})), 16.0 * 256);
}

TEST(MxuModelTest, SmallDotPaysForPaddedTiles) {
  const ChipSpec& chip = V5e();
  Contraction c = Gemm(100, 100, 100, hlo::PrimitiveType::kF32);
  double padded = MxuSeconds(Gemm(104, 128, 128, hlo::PrimitiveType::kF32), {1, 104, 128, 128}, chip);
  EXPECT_DOUBLE_EQ(MxuSeconds(c, c.gemm, chip), padded);
  EXPECT_GT(MxuSeconds(c, c.gemm, chip), MxuSeconds(c, {1, 96, 128, 128}, chip));
  // One 128x128 weight tile keeps one of v5e's four MXUs busy: a quarter
  // of peak for the padded work.
  double useful = 2.0 * 104 * 128 * 128 / chip.bf16_flops;
  EXPECT_NEAR(padded, 4 * useful, 1e-15);
}

TEST(MxuModelTest, PrecisionSetsPasses) {
  const ChipSpec& chip = V5e();
  auto program = testing::DotProgram("f32[2048,2048]", "f32[2048,2048]", "f32[2048,2048]");
  auto high = testing::DotProgram("f32[2048,2048]", "f32[2048,2048]", "f32[2048,2048]",
                                  ", operand_precision={high,high}");
  auto highest = testing::DotProgram("f32[2048,2048]", "f32[2048,2048]", "f32[2048,2048]",
                                     ", operand_precision={highest,highest}");
  ASSERT_TRUE(program && high && highest);
  auto base = SimulateProgram(**program, chip);
  auto three = SimulateProgram(**high, chip);
  auto six = SimulateProgram(**highest, chip);
  ASSERT_TRUE(base && three && six);
  const KernelProfile& b = base->kernels[0];
  EXPECT_NEAR(three->kernels[0].compute_seconds, 3 * b.compute_seconds, 1e-3 * b.compute_seconds);
  EXPECT_NEAR(six->kernels[0].compute_seconds, 6 * b.compute_seconds, 1e-3 * b.compute_seconds);
  EXPECT_EQ(six->kernels[0].bound, Bound::kCompute);
  // DEFAULT precision runs f32 at the bf16 rate.
  EXPECT_NEAR(b.compute_seconds, 2.0 * 2048 * 2048 * 2048 / chip.bf16_flops,
              0.05 * b.compute_seconds);
}

TEST(MxuModelTest, Int8RunsAtTheInt8Rate) {
  Contraction bf16 = Gemm(1024, 1024, 1024, hlo::PrimitiveType::kBF16);
  Contraction s8 = Gemm(1024, 1024, 1024, hlo::PrimitiveType::kS8);
  EXPECT_NEAR(MxuSeconds(s8, s8.gemm, V5e()), MxuSeconds(bf16, bf16.gemm, V5e()) / 2, 1e-12);
}

TEST(MxuModelTest, Fp8RunsFasterThanBf16OnlyWhereTheMxuTakesIt) {
  // Cloud's TPU7x page: fp8 peaks at 459 / 918 / 4614 TFLOP/s on v5p, v6e
  // and TPU7x, bf16 at 459 / 918 / 2307.
  Contraction bf16 = Gemm(1024, 1024, 1024, hlo::PrimitiveType::kBF16);
  Contraction f8 = Gemm(1024, 1024, 1024, hlo::PrimitiveType::kF8E4M3FN);
  for (const char* name : {"v5e", "v5p", "v6e"}) {
    const ChipSpec& chip = *FindChip(name);
    EXPECT_NEAR(MxuSeconds(f8, f8.gemm, chip), MxuSeconds(bf16, bf16.gemm, chip), 1e-12) << name;
  }
  const ChipSpec& tpu7x = *FindChip("tpu7x");
  EXPECT_NEAR(MxuSeconds(f8, f8.gemm, tpu7x), MxuSeconds(bf16, bf16.gemm, tpu7x) / 2, 1e-12);
  // A mixed pair is widened: int8 by fp8, int8 by bf16.
  Contraction mixed = Gemm(1024, 1024, 1024, hlo::PrimitiveType::kS8);
  mixed.rhs_type = hlo::PrimitiveType::kF8E4M3FN;
  EXPECT_NEAR(MxuSeconds(mixed, mixed.gemm, tpu7x), MxuSeconds(bf16, bf16.gemm, tpu7x), 1e-12);
  mixed.rhs_type = hlo::PrimitiveType::kBF16;
  EXPECT_NEAR(MxuSeconds(mixed, mixed.gemm, V5e()), MxuSeconds(bf16, bf16.gemm, V5e()), 1e-12);
}

TEST(GridModelTest, UnchangedBlocksAreNotFetchedAgain) {
  // A [1024, 1024] f32 elementwise grid of 8 x 8 blocks with a resident
  // scalar and a row vector that follows only the column dimension.
  GridProblem p;
  p.dims = {{1024, 128}, {1024, 128}};
  p.streams = {{hlo::PrimitiveType::kF32, {{0, 1}, {1, 1}}, false},
               {hlo::PrimitiveType::kF32, {{-1, 1}}, false},
               {hlo::PrimitiveType::kF32, {{-1, 1}, {1, 1}}, false},
               {hlo::PrimitiveType::kF32, {{0, 1}, {1, 1}}, true}};
  p.step_compute = [](std::span<const int64_t>) { return 0.0; };
  GridCost cost = SimulateGrid(p, 1e12, 0);
  double block = 128.0 * 128 * 4;
  double scalar = 8.0 * 128 * 4;
  double row = 8.0 * 128 * 4;  // one row padded to 8 sublanes
  EXPECT_EQ(cost.steps, 64);
  EXPECT_DOUBLE_EQ(cost.bytes, 64 * block + scalar + 64 * row + 64 * block);
}

TEST(GridModelTest, RaggedEdgesAreCountedExactly) {
  GridProblem p;
  p.dims = {{1000, 512}, {300, 128}};
  p.streams = {{hlo::PrimitiveType::kF32, {{0, 1}, {1, 1}}, false}};
  p.step_compute = [](std::span<const int64_t> e) { return static_cast<double>(e[0] * e[1]); };
  GridCost cost = SimulateGrid(p, 1e12, 0);
  EXPECT_EQ(cost.steps, 2 * 3);
  EXPECT_DOUBLE_EQ(cost.compute_seconds, 1000.0 * 300);
  // Rows 512 + 488, columns 128 + 128 + 44 (padded to 128 lanes).
  EXPECT_DOUBLE_EQ(cost.bytes, (512.0 + 488) * (3 * 128) * 4);
}

TEST(TrafficTest, Bf16MovesHalfTheBytesOfF32) {
  auto add = [](const std::string& type) {
    testing::ProgramBuilder b;
    std::string shape = type + "[4096,4096]";
    uint32_t x = b.Parameter(shape), y = b.Parameter(shape);
    std::string hlo = "HloModule add\nENTRY e {\n  x = " + shape + " parameter(0)\n  y = " + shape +
                      " parameter(1)\n  ROOT s = " + shape + " add(x, y)\n}\n";
    uint32_t s = b.Kernel("add", "loop", hlo, {x, y}, {shape})[0];
    auto loaded = b.Load(s);
    EXPECT_TRUE(loaded) << loaded.error().message;
    auto profile = SimulateProgram(**loaded, V5e());
    EXPECT_TRUE(profile) << profile.error().message;
    return profile->kernels[0];
  };
  KernelProfile f32 = add("f32");
  KernelProfile bf16 = add("bf16");
  EXPECT_DOUBLE_EQ(f32.bytes, 3 * 4096.0 * 4096 * 4);
  EXPECT_DOUBLE_EQ(bf16.bytes, f32.bytes / 2);
  EXPECT_EQ(f32.bound, Bound::kMemory);
  EXPECT_NEAR(bf16.seconds, f32.seconds / 2, 0.05 * f32.seconds);
}

TEST(TrafficTest, SmallDotMovesPaddedTiles) {
  auto program = testing::DotProgram("f32[100,100]", "f32[100,100]", "f32[100,100]");
  ASSERT_TRUE(program) << program.error().message;
  auto profile = SimulateProgram(**program, V5e());
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_DOUBLE_EQ(profile->kernels[0].bytes, 3 * 104.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(profile->kernels[0].flops, 2.0 * 100 * 100 * 100);
  EXPECT_EQ(profile->kernels[0].bound, Bound::kOverhead);
}

TEST(TrafficTest, ConvolutionIsAnImplicitGemm) {
  testing::ProgramBuilder b;
  const std::string in = "bf16[8,56,56,256]", w = "bf16[3,3,256,256]";
  uint32_t x = b.Parameter(in), k = b.Parameter(w);
  std::string hlo = "HloModule conv\nENTRY e {\n  x = " + in + " parameter(0)\n  k = " + w +
                    " parameter(1)\n  ROOT c = " + in +
                    " convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
  uint32_t c = b.Kernel("conv", "output", hlo, {x, k}, {in})[0];
  auto loaded = b.Load(c);
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto profile = SimulateProgram(**loaded, V5e());
  ASSERT_TRUE(profile) << profile.error().message;
  const KernelProfile& p = profile->kernels[0];
  const double flops = 2.0 * 8 * 56 * 56 * 256 * 256 * 9;
  EXPECT_DOUBLE_EQ(p.flops, flops);
  EXPECT_EQ(p.bound, Bound::kCompute);
  EXPECT_GE(p.seconds, flops / V5e().bf16_flops);
  EXPECT_LE(p.seconds, 1.3 * flops / V5e().bf16_flops);
  // Input and output once, the 3x3 kernel at most once per output block.
  EXPECT_GE(p.bytes, 2 * 8.0 * 56 * 56 * 256 * 2);
}

// MobileNet's 3x3 depthwise layer: one input feature per group, so a
// multiply-add per tap and output element on the vector unit; as grouped
// GEMMs it would fill one row of a weight tile per group and take 40x
// longer. It reads its input and writes its output once, memory bound.
TEST(TrafficTest, DepthwiseConvolutionIsVectorWorkAtMemorySpeed) {
  testing::ProgramBuilder b;
  const std::string in = "f32[8,56,56,256]", w = "f32[3,3,1,256]";
  uint32_t x = b.Parameter(in), k = b.Parameter(w);
  std::string hlo = "HloModule dw\nENTRY e {\n  x = " + in + " parameter(0)\n  k = " + w +
                    " parameter(1)\n  ROOT c = " + in +
                    " convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                    "feature_group_count=256\n}\n";
  uint32_t c = b.Kernel("dw", "single", hlo, {x, k}, {in})[0];
  auto loaded = b.Load(c);
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto profile = SimulateProgram(**loaded, V5e());
  ASSERT_TRUE(profile) << profile.error().message;
  const KernelProfile& p = profile->kernels[0];
  const double elements = 8.0 * 56 * 56 * 256;
  EXPECT_DOUBLE_EQ(p.flops, 2 * 9 * elements);
  EXPECT_EQ(p.bound, Bound::kMemory);
  EXPECT_GE(p.bytes, 2 * elements * 4);
  EXPECT_LE(p.bytes, 2.1 * elements * 4);
  EXPECT_LE(p.seconds, 1.2 * p.bytes / V5e().hbm_bytes_per_s + V5e().launch_overhead_s);
}

TEST(TimingOptionsTest, ParsesDotTiles) {
  auto tiles = ParseDotTiles("512,1024,1024");
  ASSERT_TRUE(tiles) << tiles.error().message;
  EXPECT_EQ(*tiles, (DotTiles{512, 1024, 1024}));
  for (const char* bad : {"", "512", "512,1024", "1,2,3,4", "a,b,c", "0,128,128", "-1,2,3", "128,,128"}) {
    auto r = ParseDotTiles(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--dot-tiles"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace kiln::runtime::timing
