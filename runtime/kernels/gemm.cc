#include "runtime/kernels/gemm.h"

#include <algorithm>

namespace kiln::runtime {
namespace {

int64_t RoundUpDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Half of `side`, rounded up to whole groups of 32 rows or columns (a
// multiple of every level's register block).
int64_t Halve(int64_t side) { return RoundUpDiv(RoundUpDiv(side, 2), 32) * 32; }

}  // namespace

GemmPartition PartitionGemm(int64_t batch, int64_t m, int64_t n, int64_t k) {
  GemmPartition p;
  p.row_tile = m;
  p.col_tile = n;
  if (batch <= 0) {
    p.parts = 0;
    return p;
  }
  // In double: m * n * k of a hostile shape may pass int64_t.
  const double depth = static_cast<double>(std::max<int64_t>(k, 1));
  const double product_macs = static_cast<double>(m) * static_cast<double>(n) * depth;
  if (product_macs * static_cast<double>(batch) < static_cast<double>(kGemmMinPartMacs)) {
    p.batch_per_part = batch;
    return p;
  }
  if (product_macs < static_cast<double>(kGemmMaxTileMacs)) {
    // Whole products, grouped so that each part is worth a helper.
    p.batch_per_part = std::clamp<int64_t>(
        static_cast<int64_t>(static_cast<double>(kGemmMinPartMacs) / std::max(product_macs, 1.0)) + 1, 1,
        batch);
    p.parts = RoundUpDiv(batch, p.batch_per_part);
    return p;
  }
  while (static_cast<double>(p.row_tile) * static_cast<double>(p.col_tile) * depth >
         static_cast<double>(kGemmMaxTileMacs)) {
    const bool rows_longer = p.row_tile >= p.col_tile;
    int64_t& side = rows_longer ? p.row_tile : p.col_tile;
    int64_t& other = rows_longer ? p.col_tile : p.row_tile;
    if (side > kGemmMinTile) {
      side = std::max(kGemmMinTile, Halve(side));
    } else if (other > kGemmMinTile) {
      other = std::max(kGemmMinTile, Halve(other));
    } else {
      break;
    }
  }
  p.row_tiles = RoundUpDiv(m, p.row_tile);
  p.col_tiles = RoundUpDiv(n, p.col_tile);
  p.parts = batch * p.row_tiles * p.col_tiles;
  return p;
}

}  // namespace kiln::runtime
