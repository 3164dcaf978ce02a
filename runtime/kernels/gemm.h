// Batched matrix products on row-major buffers, used by dot and convolution:
// Eigen's GEMM built for the ISA level this process runs (gemm_kernels.h).
// Eigen runs single-threaded here (no OpenMP).
//
// Header-only; pure functions over caller-owned buffers; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/gemm_kernels.h"

namespace kiln::runtime {

// A GEMM operand: `batch` row-major matrices of rows x cols, stored either as
// they are or (transposed = true) as their cols x rows transposes.
template <typename T>
struct GemmOperand {
  std::vector<T> data;
  int64_t rows = 0;
  int64_t cols = 0;
  bool transposed = false;

  GemmView<T> View() const { return {data.data(), rows, cols, transposed}; }
};

// c[b] = a[b] * b[b] for b in [0, batch); c is row-major [batch, a.rows,
// b.cols] and is overwritten. a.cols must equal b.rows.
template <typename T>
void BatchedGemm(const GemmOperand<T>& a, const GemmOperand<T>& b, int64_t batch, T* c) {
  ActiveGemmKernels().For<T>()(a.View(), b.View(), batch, c);
}

}  // namespace kiln::runtime
