// Matrix products on row-major buffers, used by dot and convolution: the
// ISA level's kernel (gemm_kernels.h) for one product, and batches of
// products cut into parts that run on the host cores left idle
// (base/host_cores.h).
//
// A batch is cut by its shape alone (PartitionGemm), never by how many
// cores are free, so every element of a result is summed in the same order
// however many threads ran: results do not change with the load.
//
// Header plus gemm.cc; pure functions over caller-owned buffers;
// thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/host_cores.h"
#include "runtime/kernels/gemm_kernels.h"

namespace kiln::runtime {

// c = a * b on the calling thread.
template <typename T>
void Gemm(const GemmView<T>& a, const GemmView<T>& b, const GemmOut<T>& c) {
  ActiveGemmKernels().For<T>()(a, b, c);
}

// How a batch of `batch` products of [m, k] x [k, n] is cut: a part is
// `batch_per_part` whole products when they are small, or one tile of
// row_tile x col_tile results of one product.
struct GemmPartition {
  int64_t batch_per_part = 1;
  int64_t row_tile = 0, col_tile = 0;
  int64_t row_tiles = 1, col_tiles = 1;
  int64_t parts = 1;
};

// Products of fewer multiply-adds than this are not cut (a helper's wake-up
// would cost more than it saves).
inline constexpr int64_t kGemmMinPartMacs = int64_t{1} << 21;
// Tiles are halved along their longer side, down to kGemmMinTile rows or
// columns, while they hold more multiply-adds than this.
inline constexpr int64_t kGemmMaxTileMacs = int64_t{1} << 26;
inline constexpr int64_t kGemmMinTile = 128;

GemmPartition PartitionGemm(int64_t batch, int64_t m, int64_t n, int64_t k);

// A GEMM operand: `batch` matrices of rows x cols stored densely one after
// another (each as it is or transposed), held in `owned` when the kernel had
// to convert or rearrange them, or read in place from a caller's buffer.
template <typename T>
struct GemmOperand {
  std::vector<T> owned;
  GemmView<T> view;  // of matrix 0; data points into owned or the caller's buffer
};

// c[i] = a[i] * b[i] for i in [0, batch): a[i] lies a.rows * a.cols
// elements after a[i - 1] (dense views only), likewise b; c is row-major
// [batch, a.rows, b.cols] and is overwritten.
template <typename T>
void BatchedGemm(const GemmView<T>& a, const GemmView<T>& b, int64_t batch, T* c) {
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  const GemmPartition p = PartitionGemm(batch, m, n, k);
  const GemmFn<T> gemm = ActiveGemmKernels().For<T>();
  auto run_part = [&](int64_t part) {
    if (p.batch_per_part > 1 || (p.row_tiles == 1 && p.col_tiles == 1)) {
      const int64_t first = part * p.batch_per_part;
      const int64_t last = std::min(batch, first + p.batch_per_part);
      for (int64_t i = first; i < last; ++i) {
        GemmView<T> ai = a, bi = b;
        ai.data += i * m * k;
        bi.data += i * k * n;
        gemm(ai, bi, {c + i * m * n, m, n, n});
      }
      return;
    }
    const int64_t tiles = p.row_tiles * p.col_tiles;
    const int64_t i = part / tiles, tile = part % tiles;
    const int64_t r0 = (tile / p.col_tiles) * p.row_tile, c0 = (tile % p.col_tiles) * p.col_tile;
    const int64_t rows = std::min(p.row_tile, m - r0), cols = std::min(p.col_tile, n - c0);
    GemmView<T> ai = a, bi = b;
    ai.stride = a.StoredRowStride();
    bi.stride = b.StoredRowStride();
    // Rows of a are stored rows, or stored columns when a is transposed;
    // columns of b likewise.
    ai.data += i * m * k + (a.transposed ? r0 : r0 * ai.stride);
    ai.rows = rows;
    bi.data += i * k * n + (b.transposed ? c0 * bi.stride : c0);
    bi.cols = cols;
    gemm(ai, bi, {c + i * m * n + r0 * n + c0, rows, cols, n});
  };
  if (p.parts == 1) {
    run_part(0);
    return;
  }
  HostCores::Get().ParallelFor(p.parts, run_part);
}

}  // namespace kiln::runtime
