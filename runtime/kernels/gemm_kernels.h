// The matrix product compiled once per ISA level (isa/gemm_level.cc), and
// the table of the level this process runs. gemm.h batches, tiles and
// spreads products over host cores on top of it.
//
// The level tables are immutable and live for the whole program; every
// function here is thread-safe. The kernels read and write caller-owned
// buffers only.
#pragma once

#include <complex>
#include <cstdint>

#include "runtime/kernels/isa_level.h"

namespace kiln::runtime {

// A row-major matrix of rows x cols at data, stored as it is or
// (transposed = true) as its cols x rows transpose; `stride` elements lie
// between the starts of consecutive stored rows (0: stored densely). A
// block of a larger matrix is a view with the larger matrix's stride.
template <typename T>
struct GemmView {
  const T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  bool transposed = false;
  int64_t stride = 0;

  int64_t StoredRowStride() const { return stride != 0 ? stride : (transposed ? rows : cols); }
};

// The row-major rows x cols result block at data, `stride` elements between
// the starts of its rows (0: dense).
template <typename T>
struct GemmOut {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;
};

// c = a * b, overwriting c. a.cols must equal b.rows; c is a.rows x b.cols.
// Single-threaded.
template <typename T>
using GemmFn = void (*)(const GemmView<T>& a, const GemmView<T>& b, const GemmOut<T>& c);

// One level's GEMM for each compute type (element_access.h's ComputeType).
struct GemmKernels {
  IsaLevel level;
  GemmFn<float> f32;
  GemmFn<double> f64;
  GemmFn<std::complex<float>> c64;
  GemmFn<std::complex<double>> c128;
  GemmFn<int64_t> s64;
  GemmFn<uint64_t> u64;

  template <typename T>
  GemmFn<T> For() const {
    if constexpr (std::is_same_v<T, float>) return f32;
    else if constexpr (std::is_same_v<T, double>) return f64;
    else if constexpr (std::is_same_v<T, std::complex<float>>) return c64;
    else if constexpr (std::is_same_v<T, std::complex<double>>) return c128;
    else if constexpr (std::is_same_v<T, int64_t>) return s64;
    else return u64;
  }
};

// The kernels built for `level`, or nullptr when this binary has none (the
// compiler lacked the flags, or the target is not x86-64). Callers must check
// IsaLevelRunnable before calling into a table: a level above the CPU's
// faults with an illegal instruction.
const GemmKernels* GemmKernelsFor(IsaLevel level);

// The kernels of ActiveIsaLevel().
const GemmKernels& ActiveGemmKernels();

}  // namespace kiln::runtime
