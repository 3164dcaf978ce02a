// The batched GEMM compiled once per ISA level (isa/gemm_level.cc), and the
// table of the level this process runs.
//
// The level tables are immutable and live for the whole program; every
// function here is thread-safe. The kernels read and write caller-owned
// buffers only.
#pragma once

#include <complex>
#include <cstdint>

#include "runtime/kernels/isa_level.h"

namespace kiln::runtime {

// `batch` row-major matrices of rows x cols at data, each stored as it is or
// (transposed = true) as its cols x rows transpose.
template <typename T>
struct GemmView {
  const T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  bool transposed = false;
};

// c[i] = a[i] * b[i] for i in [0, batch); c is row-major [batch, a.rows,
// b.cols] and is overwritten. a.cols must equal b.rows.
template <typename T>
using GemmFn = void (*)(const GemmView<T>& a, const GemmView<T>& b, int64_t batch, T* c);

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
