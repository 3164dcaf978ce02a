// Batched matrix products on row-major buffers through Eigen's GEMM, used by
// dot and convolution. Eigen runs single-threaded here (no OpenMP).
//
// Header-only; pure functions over caller-owned buffers; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace kiln::runtime {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A GEMM operand: `batch` row-major matrices of rows x cols, stored either as
// they are or (transposed = true) as their cols x rows transposes.
template <typename T>
struct GemmOperand {
  std::vector<T> data;
  int64_t rows = 0;
  int64_t cols = 0;
  bool transposed = false;
};

// c[b] = a[b] * b[b] for b in [0, batch); c is row-major [batch, a.rows,
// b.cols] and is overwritten. a.cols must equal b.rows.
template <typename T>
void BatchedGemm(const GemmOperand<T>& a, const GemmOperand<T>& b, int64_t batch, T* c) {
  using ConstMap = Eigen::Map<const RowMajorMatrix<T>>;
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  for (int64_t i = 0; i < batch; ++i) {
    Eigen::Map<RowMajorMatrix<T>> out(c + i * m * n, m, n);
    if (k == 0) {
      out.setZero();
      continue;
    }
    const T* pa = a.data.data() + i * m * k;
    const T* pb = b.data.data() + i * k * n;
    if (!a.transposed && !b.transposed) {
      out.noalias() = ConstMap(pa, m, k) * ConstMap(pb, k, n);
    } else if (!a.transposed) {
      out.noalias() = ConstMap(pa, m, k) * ConstMap(pb, n, k).transpose();
    } else if (!b.transposed) {
      out.noalias() = ConstMap(pa, k, m).transpose() * ConstMap(pb, k, n);
    } else {
      out.noalias() = ConstMap(pa, k, m).transpose() * ConstMap(pb, n, k).transpose();
    }
  }
}

}  // namespace kiln::runtime
