// Batched products cut into tiles and spread over host cores: the cut
// covers every result once, the tiled product is the product, and the
// result does not change with how many cores ran it.
#include "runtime/kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/host_cores_testing.h"
#include "runtime/kernels/random_test_values.h"

namespace kiln::runtime {
namespace {

TEST(PartitionGemmTest, SmallProductsAreOnePart) {
  GemmPartition p = PartitionGemm(4, 16, 16, 16);
  EXPECT_EQ(p.parts, 1);
  EXPECT_EQ(p.batch_per_part, 4);
  EXPECT_EQ(PartitionGemm(0, 512, 512, 512).parts, 0);
}

TEST(PartitionGemmTest, ManySmallProductsAreGroupedIntoPartsWorthAHelper) {
  // 64 x 64 x 64 = 2^18 multiply-adds each: eight or more to a part.
  GemmPartition p = PartitionGemm(100, 64, 64, 64);
  EXPECT_GE(p.batch_per_part * 64 * 64 * 64, kGemmMinPartMacs);
  EXPECT_EQ(p.parts, (100 + p.batch_per_part - 1) / p.batch_per_part);
  EXPECT_GT(p.parts, 1);
}

TEST(PartitionGemmTest, LargeProductsAreTiledWithinTheBoundAndCoverTheResult) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1024, 1024, 1024},
                         {3000, 70, 5000},
                         {100, 100, 1 << 16},
                         {4097, 4095, 256}}) {
    GemmPartition p = PartitionGemm(3, m, n, k);
    EXPECT_EQ(p.parts, 3 * p.row_tiles * p.col_tiles);
    EXPECT_GE(p.row_tiles * p.row_tile, m);
    EXPECT_LT((p.row_tiles - 1) * p.row_tile, m);
    EXPECT_GE(p.col_tiles * p.col_tile, n);
    EXPECT_LT((p.col_tiles - 1) * p.col_tile, n);
    const bool within = p.row_tile * p.col_tile * k <= kGemmMaxTileMacs;
    const bool at_floor = p.row_tile <= kGemmMinTile && p.col_tile <= kGemmMinTile;
    const bool whole_side = p.row_tile == m || p.col_tile == n;
    EXPECT_TRUE(within || at_floor || whole_side) << m << "x" << n << "x" << k;
  }
  GemmPartition cube = PartitionGemm(1, 1024, 1024, 1024);
  EXPECT_GT(cube.parts, 1);
}

// Runs BatchedGemm on [batch, m, k] x [batch, k, n] in all four storage
// orders and compares with the level's kernel over each whole product.
void ExpectTiledProductIsTheProduct(int64_t batch, int64_t m, int64_t k, int64_t n) {
  const std::vector<float> a = testing::RandomTestValues<float>(batch * m * k, 1), b = testing::RandomTestValues<float>(batch * k * n, 2);
  const double tolerance = 1e-5 * static_cast<double>(k);
  for (bool at : {false, true}) {
    for (bool bt : {false, true}) {
      std::vector<float> want(batch * m * n), got(batch * m * n, 7.0f);
      for (int64_t i = 0; i < batch; ++i) {
        Gemm<float>({a.data() + i * m * k, m, k, at}, {b.data() + i * k * n, k, n, bt},
                    {want.data() + i * m * n, m, n});
      }
      BatchedGemm<float>({a.data(), m, k, at}, {b.data(), k, n, bt}, batch, got.data());
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double{std::abs(want[i] - got[i])});
      EXPECT_LE(worst, tolerance) << batch << "x" << m << "x" << k << "x" << n << " at=" << at
                                  << " bt=" << bt;
    }
  }
}

TEST(BatchedGemmTest, TiledProductsAreTheProducts) {
  ASSERT_GT(PartitionGemm(2, 700, 300, 600).row_tiles * PartitionGemm(2, 700, 300, 600).col_tiles, 1)
      << "the case must be tiled";
  ExpectTiledProductIsTheProduct(2, 700, 600, 300);
  ExpectTiledProductIsTheProduct(1, 257, 1100, 513);
  ExpectTiledProductIsTheProduct(40, 50, 70, 60);  // grouped whole products
}

// The same product with every core free and with every other core held by
// a lease: bit for bit the same result.
TEST(BatchedGemmTest, TheResultDoesNotDependOnHowManyCoresRanIt) {
  const int64_t m = 600, k = 700, n = 500;
  const std::vector<float> a = testing::RandomTestValues<float>(m * k, 3), b = testing::RandomTestValues<float>(k * n, 4);
  std::vector<float> spread(m * n), alone(m * n);
  BatchedGemm<float>({a.data(), m, k, true}, {b.data(), k, n}, 1, spread.data());

  {
    kiln::testing::AllHostCoresHeld held;
    BatchedGemm<float>({a.data(), m, k, true}, {b.data(), k, n}, 1, alone.data());
  }
  EXPECT_EQ(spread, alone);
}

}  // namespace
}  // namespace kiln::runtime
