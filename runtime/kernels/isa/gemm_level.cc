// The batched GEMM behind dot and convolution, compiled once per ISA level
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
void BatchedGemm(const GemmView<T>& a, const GemmView<T>& b, int64_t batch, T* c) {
  using ConstMap = Eigen::Map<const RowMajorMatrix<T>>;
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  for (int64_t i = 0; i < batch; ++i) {
    Eigen::Map<RowMajorMatrix<T>> out(c + i * m * n, m, n);
    if (k == 0) {
      out.setZero();
      continue;
    }
    const T* pa = a.data + i * m * k;
    const T* pb = b.data + i * k * n;
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

}  // namespace

extern const GemmKernels kGemmKernels;
const GemmKernels kGemmKernels{
    .level = static_cast<IsaLevel>(KILN_ISA_LEVEL),
    .f32 = &BatchedGemm<float>,
    .f64 = &BatchedGemm<double>,
    .c64 = &BatchedGemm<std::complex<float>>,
    .c128 = &BatchedGemm<std::complex<double>>,
    .s64 = &BatchedGemm<int64_t>,
    .u64 = &BatchedGemm<uint64_t>,
};

}  // namespace kiln::runtime::KILN_ISA_NAMESPACE
