#include "compiler/fusion/tiling.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::fusion {
namespace {

using passes::testing::ParseVerified;

// The single kernel of a one-kernel module under the heuristic plan.
Result<Kernel> OnlyKernel(const hlo::Module& module, const TilingOptions& tiling) {
  PlannerOptions options;
  options.tiling = tiling;
  KILN_ASSIGN_OR_RETURN(FusionPlan plan,
                        PlanComputation(*module.entry(), PlanKind::kHeuristic, options));
  if (plan.kernels.size() != 1) return InternalError("expected one kernel");
  return plan.kernels[0];
}

constexpr char kElementwise[] = R"(
HloModule m
ENTRY e {
  x = $T[4096,4096] parameter(0)
  y = $T[4096,4096] parameter(1)
  ROOT a = $T[4096,4096] add(x, y)
})";

constexpr char kDot[] = R"(
HloModule m
ENTRY e {
  x = bf16[2048,4096] parameter(0)
  w = bf16[4096,2048] parameter(1)
  ROOT d = bf16[2048,2048] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

std::string WithType(std::string text, std::string_view type) {
  for (size_t at = text.find("$T"); at != std::string::npos; at = text.find("$T")) {
    text.replace(at, 2, type);
  }
  return text;
}

TEST(TilingTest, BlocksAlignToTheLayoutTileOfEachType) {
  for (auto [type, sublanes] : {std::pair{"f32", 8}, {"bf16", 16}, {"s8", 32}}) {
    auto module = ParseVerified(WithType(kElementwise, type));
    ASSERT_NE(module, nullptr);
    TilingOptions tiling;
    auto kernel = OnlyKernel(*module, tiling);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    const TileChoice& tile = kernel->tile;
    ASSERT_TRUE(tile.tiled);
    ASSERT_EQ(tile.outputs.size(), 1u);
    const auto& block = tile.outputs[0].dimensions;
    ASSERT_EQ(block.size(), 2u);
    EXPECT_EQ(block[0] % sublanes, 0) << type;
    EXPECT_EQ(block[1] % 128, 0) << type;
    EXPECT_LE(tile.vmem_bytes, tiling.scoped_vmem_bytes) << type;
    // Three arrays, double-buffered.
    EXPECT_EQ(tile.vmem_bytes, 6 * tile.outputs[0].bytes) << type;
    EXPECT_EQ(tile.grid, (std::vector<int64_t>{4096 / block[0], 4096 / block[1]}));
    EXPECT_TRUE(
        ValidateTile(MakeTilingProblem(*module->entry(), *kernel), tile, tiling).has_value());
  }
}

TEST(TilingTest, SmallerScopedVmemGivesSmallerBlocksThatStillFit) {
  auto module = ParseVerified(WithType(kElementwise, "f32"));
  ASSERT_NE(module, nullptr);
  TilingOptions large, small;
  small.scoped_vmem_bytes = 1 << 20;
  auto big_kernel = OnlyKernel(*module, large);
  auto small_kernel = OnlyKernel(*module, small);
  ASSERT_TRUE(big_kernel.has_value() && small_kernel.has_value());
  EXPECT_LE(small_kernel->tile.vmem_bytes, small.scoped_vmem_bytes);
  EXPECT_LT(small_kernel->tile.outputs[0].bytes, big_kernel->tile.outputs[0].bytes);
  EXPECT_GT(small_kernel->tile.grid_steps(), big_kernel->tile.grid_steps());
  // The small tile does not fit a smaller VMEM still.
  TilingOptions tiny;
  tiny.scoped_vmem_bytes = small_kernel->tile.vmem_bytes - 1;
  auto refused =
      ValidateTile(MakeTilingProblem(*module->entry(), *small_kernel), small_kernel->tile, tiny);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("scoped VMEM is"), std::string::npos);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
}

TEST(TilingTest, NothingFitsGivesAnErrorNamingTheNeed) {
  auto module = ParseVerified(WithType(kElementwise, "f32"));
  ASSERT_NE(module, nullptr);
  TilingProblem problem;
  problem.space = TilingProblem::Space::kLoop;
  problem.anchor = module->entry()->root();
  for (const auto& instr : module->entry()->instructions()) {
    if (instr->opcode() == hlo::Opcode::kParameter) problem.inputs.push_back(instr.get());
  }
  problem.outputs = {module->entry()->root()};
  TilingOptions tiny;
  tiny.scoped_vmem_bytes = 16 << 10;
  auto tile = ChooseTile(problem, tiny);
  ASSERT_FALSE(tile.has_value());
  EXPECT_EQ(tile.error().message,
            "kernel of %a (add) needs 24.0 KiB of VMEM even with the smallest blocks, scoped "
            "VMEM is 16.0 KiB");
  EXPECT_EQ(MinimalVmemBytes(problem, tiny), 24 << 10);
}

// The planner's check agrees with MinimalVmemBytes, answering at once when
// every array fits whole and naming the exact need when nothing fits.
TEST(TilingTest, FitsScopedVmemAgreesWithTheMinimalVmem) {
  auto module = ParseVerified(WithType(kElementwise, "f32"));
  ASSERT_NE(module, nullptr);
  TilingProblem problem;
  problem.space = TilingProblem::Space::kLoop;
  problem.anchor = module->entry()->root();
  problem.inputs = {module->entry()->parameters()[0], module->entry()->parameters()[1]};
  problem.outputs = {problem.anchor};
  TilingOptions roomy;
  roomy.scoped_vmem_bytes = int64_t{1} << 30;  // all three 64 MiB arrays fit whole
  EXPECT_TRUE(FitsScopedVmem(problem, roomy));
  TilingOptions usual;
  EXPECT_TRUE(FitsScopedVmem(problem, usual));
  TilingOptions tiny;
  tiny.scoped_vmem_bytes = 16 << 10;
  int64_t needed = 0;
  EXPECT_FALSE(FitsScopedVmem(problem, tiny, &needed));
  EXPECT_EQ(needed, MinimalVmemBytes(problem, tiny));
  EXPECT_EQ(needed, 24 << 10);
}

TEST(TilingTest, DotBlocksAreMultiplesOfTheMxu) {
  auto module = ParseVerified(kDot);
  ASSERT_NE(module, nullptr);
  for (int64_t mxu : {128, 256}) {
    TilingOptions tiling;
    tiling.mxu_size = mxu;
    auto kernel = OnlyKernel(*module, tiling);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    const TileChoice& tile = kernel->tile;
    ASSERT_EQ(tile.inputs.size(), 2u);
    int64_t bm = tile.inputs[0].dimensions[0], bk = tile.inputs[0].dimensions[1];
    int64_t bn = tile.inputs[1].dimensions[1];
    EXPECT_EQ(bm % mxu, 0);
    EXPECT_EQ(bn % mxu, 0);
    EXPECT_EQ(bk % mxu, 0);
    EXPECT_EQ(tile.grid, (std::vector<int64_t>{1, 2048 / bm, 2048 / bn, 4096 / bk}));
    EXPECT_EQ(tile.accumulator_bytes, bm * bn * 4);
    EXPECT_LE(tile.vmem_bytes, tiling.scoped_vmem_bytes);
  }
}

// Every candidate is legal (ValidateTile), they are distinct, the first is
// ChooseTile's answer, and a smaller scoped VMEM keeps only a subset.
TEST(TilingTest, TileCandidatesAreAllLegalAndStartWithTheChosenTile) {
  auto dot = ParseVerified(kDot);
  auto loop = ParseVerified(WithType(kElementwise, "f32"));
  ASSERT_NE(dot, nullptr);
  ASSERT_NE(loop, nullptr);
  for (const hlo::Module* module : {dot.get(), loop.get()}) {
    TilingOptions tiling;
    auto kernel = OnlyKernel(*module, tiling);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    TilingProblem problem = MakeTilingProblem(*module->entry(), *kernel);
    auto candidates = TileCandidates(problem, tiling);
    ASSERT_TRUE(candidates.has_value()) << candidates.error().message;
    ASSERT_GT(candidates->size(), 3u);
    auto chosen = ChooseTile(problem, tiling);
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(candidates->front(), *chosen);
    EXPECT_EQ(candidates->front(), kernel->tile);
    for (size_t i = 0; i < candidates->size(); ++i) {
      const TileChoice& tile = (*candidates)[i];
      EXPECT_TRUE(tile.tiled);
      Status valid = ValidateTile(problem, tile, tiling);
      EXPECT_TRUE(valid.has_value()) << i << ": " << valid.error().message;
      for (size_t j = 0; j < i; ++j) EXPECT_NE(tile, (*candidates)[j]) << i << " repeats " << j;
    }
    TilingOptions small = tiling;
    small.scoped_vmem_bytes = 1 << 20;
    auto fewer = TileCandidates(problem, small);
    ASSERT_TRUE(fewer.has_value());
    EXPECT_LT(fewer->size(), candidates->size());
    for (const TileChoice& tile : *fewer) {
      EXPECT_LE(tile.vmem_bytes, small.scoped_vmem_bytes);
      EXPECT_NE(std::find(candidates->begin(), candidates->end(), tile), candidates->end());
    }
  }
}

TEST(TilingTest, LeadingDimensionsStackWholeTiles) {
  // The minor [8,128] of both arrays is one f32 tile; the block stacks
  // whole slabs along the leading dimensions instead of taking 20,480 steps
  // of one tile each.
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[2560,8,8,128] parameter(0)
  ROOT t = f32[8,2560,8,128] transpose(x), dimensions={1,0,2,3}
})");
  ASSERT_NE(module, nullptr);
  TilingOptions tiling;
  auto kernel = OnlyKernel(*module, tiling);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  const TileChoice& tile = kernel->tile;
  ASSERT_TRUE(tile.tiled);
  int64_t steps = 1;
  for (int64_t g : tile.grid) steps *= g;
  EXPECT_LE(steps, 64);
  const std::vector<int64_t>& out = tile.outputs.at(0).dimensions;
  EXPECT_EQ(out[2], 8);
  EXPECT_EQ(out[3], 128);
  EXPECT_LE(tile.vmem_bytes, tiling.scoped_vmem_bytes);
  // Every candidate is a contiguous stack the tile validator accepts.
  TilingProblem problem = MakeTilingProblem(*module->entry(), *kernel);
  auto candidates = TileCandidates(problem, tiling);
  ASSERT_TRUE(candidates.has_value());
  for (const TileChoice& candidate : *candidates) {
    EXPECT_TRUE(ValidateTile(problem, candidate, tiling).has_value());
    const std::vector<int64_t>& b = candidate.outputs.at(0).dimensions;
    if (b[0] > 1) {
      EXPECT_EQ(b[1], 2560);
    }
  }
}

TEST(TilingTest, BatchedDotCandidatesStackWholeGemms) {
  // Attention scores of 48 heads: each head's GEMM is one MXU tile, so the
  // heuristic's one head per block takes 48 grid steps; the tuner's
  // candidates also stack whole heads.
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  q = bf16[48,128,128] parameter(0)
  k = bf16[48,128,64] parameter(1)
  ROOT s = bf16[48,128,64] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  ASSERT_NE(module, nullptr);
  TilingOptions tiling;
  auto kernel = OnlyKernel(*module, tiling);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(kernel->tile.grid.size(), 4u);
  EXPECT_EQ(kernel->tile.grid[0], 48);  // the heuristic's choice is unchanged
  TilingProblem problem = MakeTilingProblem(*module->entry(), *kernel);
  auto candidates = TileCandidates(problem, tiling);
  ASSERT_TRUE(candidates.has_value()) << candidates.error().message;
  EXPECT_EQ(candidates->front(), kernel->tile);
  std::vector<int64_t> stacked;
  for (const TileChoice& tile : *candidates) {
    EXPECT_TRUE(ValidateTile(problem, tile, tiling).has_value());
    if (tile.grid[0] == 48) continue;
    // A block of several heads holds each whole: one step per block.
    EXPECT_EQ(tile.grid[1] * tile.grid[2] * tile.grid[3], 1);
    EXPECT_EQ(tile.outputs.at(0).dimensions, (std::vector<int64_t>{48 / tile.grid[0], 128, 64}));
    EXPECT_GE(tile.accumulator_bytes, (48 / tile.grid[0]) * 128 * 128 * 4);
    stacked.push_back(48 / tile.grid[0]);
  }
  EXPECT_EQ(stacked, (std::vector<int64_t>{48, 24, 12, 6, 3}));
  // Under a small scoped VMEM only the blocks that fit are offered.
  TilingOptions small = tiling;
  small.scoped_vmem_bytes = 2 << 20;
  auto fewer = TileCandidates(problem, small);
  ASSERT_TRUE(fewer.has_value());
  for (const TileChoice& tile : *fewer) EXPECT_LE(tile.vmem_bytes, small.scoped_vmem_bytes);
  EXPECT_LT(fewer->size(), candidates->size());
}

TEST(TilingTest, TileCandidatesFailLikeChooseTileWhenNothingFits) {
  auto module = ParseVerified(WithType(kElementwise, "f32"));
  ASSERT_NE(module, nullptr);
  auto kernel = OnlyKernel(*module, TilingOptions{});
  ASSERT_TRUE(kernel.has_value());
  TilingOptions tiny;
  tiny.scoped_vmem_bytes = 16 << 10;
  TilingProblem problem = MakeTilingProblem(*module->entry(), *kernel);
  auto candidates = TileCandidates(problem, tiny);
  ASSERT_FALSE(candidates.has_value());
  EXPECT_EQ(candidates.error().message, ChooseTile(problem, tiny).error().message);
  // An untiled problem has exactly one, untiled, candidate.
  auto untiled = TileCandidates(TilingProblem{}, tiny);
  ASSERT_TRUE(untiled.has_value());
  ASSERT_EQ(untiled->size(), 1u);
  EXPECT_FALSE(untiled->front().tiled);
}

// An operand transposed relative to the output is blocked by the slice of
// it each block needs: its rows follow the output's major dimension, which
// becomes blockable, so no block reads it whole or pads its rows.
TEST(TilingTest, TransposedOperandBlocksFollowTheSpace) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[8,8192,2560] parameter(0)
  y = f32[8192,8,2560] parameter(1)
  t = f32[8192,8,2560] transpose(x), dimensions={1,0,2}
  ROOT a = f32[8192,8,2560] add(t, y)
})");
  ASSERT_NE(module, nullptr);
  TilingOptions tiling;
  auto kernel = OnlyKernel(*module, tiling);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  const TileChoice& tile = kernel->tile;
  ASSERT_TRUE(tile.tiled);
  ASSERT_EQ(tile.inputs.size(), 2u);
  ASSERT_EQ(tile.outputs.size(), 1u);
  const std::vector<int64_t>& out = tile.outputs[0].dimensions;
  ASSERT_EQ(out.size(), 3u);
  // x's block is the output block with its first two dimensions swapped.
  EXPECT_EQ(tile.inputs[0].dimensions, (std::vector<int64_t>{out[1], out[0], out[2]}));
  EXPECT_EQ(tile.inputs[1].dimensions, out);
  EXPECT_GE(out[0], 8) << "the output's major dimension is x's rows";
  EXPECT_EQ(out[0] % 8, 0);
  EXPECT_EQ(tile.inputs[0].bytes, tile.outputs[0].bytes);
  EXPECT_EQ(tile.grid, (std::vector<int64_t>{8192 / out[0], 8 / out[1], (2560 + out[2] - 1) / out[2]}));
  EXPECT_TRUE(ValidateTile(MakeTilingProblem(*module->entry(), *kernel), tile, tiling).has_value());
}

// A dot's operand arriving transposed is blocked as it lies: its rows follow
// n, its columns k.
TEST(TilingTest, TransposedDotOperandIsBlockedAsItLies) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = bf16[2048,4096] parameter(0)
  w = bf16[2048,4096] parameter(1)
  wt = bf16[4096,2048] transpose(w), dimensions={1,0}
  ROOT d = bf16[2048,2048] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  TilingProblem problem;
  problem.space = TilingProblem::Space::kContraction;
  problem.anchor = module->entry()->root();
  problem.inputs = {module->entry()->parameters()[0], module->entry()->parameters()[1]};
  problem.outputs = {problem.anchor};
  auto chosen = ChooseTile(problem, TilingOptions{});
  ASSERT_TRUE(chosen.has_value()) << chosen.error().message;
  const TileChoice& tile = *chosen;
  ASSERT_EQ(tile.inputs.size(), 2u);
  ASSERT_EQ(tile.grid.size(), 4u);
  const int64_t bm = 2048 / tile.grid[1], bn = 2048 / tile.grid[2], bk = 4096 / tile.grid[3];
  EXPECT_EQ(tile.inputs[0].dimensions, (std::vector<int64_t>{bm, bk}));
  EXPECT_EQ(tile.inputs[1].dimensions, (std::vector<int64_t>{bn, bk}));
}

}  // namespace
}  // namespace kiln::fusion
