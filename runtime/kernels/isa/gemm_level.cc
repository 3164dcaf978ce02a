// The matrix product behind dot and convolution, compiled once per ISA level
// (runtime/kernels/CMakeLists.txt): KILN_ISA_NAMESPACE names the level's
// namespace (isa_baseline, isa_avx2, isa_avx512) and the level's -march flags
// let Eigen use that level's vector registers.
//
// One definition rule: the same inline function or template compiled with
// different -march flags in two objects is a weak symbol of one name, and the
// linker keeps one copy for every caller -- an AVX-512 copy could then run on
// a CPU without AVX-512, or every level could run the SSE2 copy. So no symbol
// this file defines may carry a name another object also defines:
//   * our code sits in an anonymous namespace (internal linkage) except the
//     level's table, which lives in kiln::runtime::KILN_ISA_NAMESPACE;
//   * Eigen's templates are renamed: the build defines the macro `Eigen` to a
//     per-level name (kiln_eigen_avx2, ...), so every Eigen instantiation here
//     mangles to a name only this level's object has;
//   * this file passes raw pointers and instantiates nothing of the standard
//     library's templates beyond what is inlined.
// The ctest `kiln_isa_symbols_isolated` (isa/check_symbols.cmake) fails the
// build's tests when any level object defines a global or weak symbol outside
// its own namespaces, which is what would let the linker merge copies.
#include <Eigen/Core>

#include "runtime/kernels/gemm_kernels.h"

#ifndef KILN_ISA_NAMESPACE
#error "compile with -DKILN_ISA_NAMESPACE=isa_<level> and -DKILN_ISA_LEVEL=<IsaLevel value>"
#endif

namespace kiln::runtime::KILN_ISA_NAMESPACE {
namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

// The stored matrix of `v` (rows x cols, or cols x rows when transposed).
template <typename T>
ConstMap<T> Stored(const GemmView<T>& v) {
  return v.transposed ? ConstMap<T>(v.data, v.cols, v.rows, Eigen::OuterStride<>(v.StoredRowStride()))
                      : ConstMap<T>(v.data, v.rows, v.cols, Eigen::OuterStride<>(v.StoredRowStride()));
}

template <typename T>
void Gemm(const GemmView<T>& a, const GemmView<T>& b, const GemmOut<T>& c) {
  Eigen::Map<RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>> out(
      c.data, c.rows, c.cols, Eigen::OuterStride<>(c.stride != 0 ? c.stride : c.cols));
  if (a.cols == 0) {
    out.setZero();
    return;
  }
  const ConstMap<T> sa = Stored(a), sb = Stored(b);
  if (!a.transposed && !b.transposed) {
    out.noalias() = sa * sb;
  } else if (!a.transposed) {
    out.noalias() = sa * sb.transpose();
  } else if (!b.transposed) {
    out.noalias() = sa.transpose() * sb;
  } else {
    out.noalias() = sa.transpose() * sb.transpose();
  }
}

}  // namespace

extern const GemmKernels kGemmKernels;
const GemmKernels kGemmKernels{
    .level = static_cast<IsaLevel>(KILN_ISA_LEVEL),
    .f32 = &Gemm<float>,
    .f64 = &Gemm<double>,
    .c64 = &Gemm<std::complex<float>>,
    .c128 = &Gemm<std::complex<double>>,
    .s64 = &Gemm<int64_t>,
    .u64 = &Gemm<uint64_t>,
};

}  // namespace kiln::runtime::KILN_ISA_NAMESPACE
