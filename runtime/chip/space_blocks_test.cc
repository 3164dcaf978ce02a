// Which blocks a tile search considers (space_blocks.h).
#include "runtime/chip/space_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace kiln::runtime {
namespace {

using Blocks = std::vector<std::vector<int64_t>>;

TEST(SpaceBlocksTest, WithoutStackedDimensionsEveryCombinationLastFastest) {
  const std::vector<int64_t> extents = {16, 256};
  const std::vector<std::vector<int64_t>> options = {{16, 8}, {256, 128}};
  EXPECT_EQ(SpaceBlocks(extents, options, {false, false}),
            (Blocks{{16, 256}, {16, 128}, {8, 256}, {8, 128}}));
}

TEST(SpaceBlocksTest, StackedDimensionsGrowOnlyOverWholeLaterOnes) {
  // [4, 2, 8, 256]: dimensions 0 and 1 stacked, 2 and 3 blockable.
  const std::vector<int64_t> extents = {4, 2, 8, 256};
  const std::vector<std::vector<int64_t>> options = {{4, 2, 1}, {2, 1}, {8}, {256, 128}};
  const Blocks blocks = SpaceBlocks(extents, options, {true, true, false, false});
  EXPECT_EQ(blocks, (Blocks{{1, 1, 8, 256},    // stacked dimensions 1
                            {1, 1, 8, 128},
                            {1, 2, 8, 256},    // dimension 1 stacks whole rows
                            {4, 2, 8, 256},    // dimension 0 stacks whole [2, 8, 256] slabs
                            {2, 2, 8, 256}}));
  for (const std::vector<int64_t>& b : blocks) {
    EXPECT_TRUE(StacksContiguously(extents, {false, false, true, true}, {true, true, false, false}, b));
  }
  // A stack over a partial row, or over a partial inner stack, is not one.
  EXPECT_FALSE(StacksContiguously(extents, {false, false, true, true}, {true, true, false, false}, std::vector<int64_t>{1, 2, 8, 128}));
  EXPECT_FALSE(StacksContiguously(extents, {false, false, true, true}, {true, true, false, false}, std::vector<int64_t>{2, 1, 8, 256}));
  // A dimension neither blockable nor stacked stays 1.
  EXPECT_FALSE(StacksContiguously(extents, {false, false, true, true}, {false, true, false, false}, std::vector<int64_t>{2, 2, 8, 256}));
}

TEST(SpaceBlocksTest, BlockableDimensionsBeforeAStackKeepTheirCandidates) {
  // A transposed array tiles dimension 0: it stays blockable in front of
  // the stacked dimension 1.
  const std::vector<int64_t> extents = {256, 3, 128};
  const std::vector<std::vector<int64_t>> options = {{256, 128}, {3, 1}, {128}};
  const Blocks blocks = SpaceBlocks(extents, options, {false, true, false});
  EXPECT_NE(std::find(blocks.begin(), blocks.end(), std::vector<int64_t>{128, 3, 128}), blocks.end());
  EXPECT_NE(std::find(blocks.begin(), blocks.end(), std::vector<int64_t>{256, 3, 128}), blocks.end());
  EXPECT_EQ(blocks.size(), 4u);
}

}  // namespace
}  // namespace kiln::runtime
