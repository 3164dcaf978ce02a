#include "bench/dot_conv_eigen_native.h"

#include <cstdio>

#include <Eigen/Core>

namespace kiln::bench {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

void NativeSquareGemm(const float* a, const float* b, float* c, int64_t n) {
  Eigen::Map<const RowMajor> ma(a, n, n), mb(b, n, n);
  Eigen::Map<RowMajor> mc(c, n, n);
  mc.noalias() = ma * mb;
}

void NativeConv3x3Nhwc(const float* in, const float* kernel, float* out, float* patches,
                       int64_t batch, int64_t hw, int64_t ci, int64_t co) {
  constexpr int64_t k = 3;
  const int64_t rows = batch * hw * hw, cols = k * k * ci;
  Eigen::Map<RowMajor> mp(patches, rows, cols);
  mp.setZero();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t y = 0; y < hw; ++y)
      for (int64_t x = 0; x < hw; ++x) {
        float* dst = patches + ((b * hw + y) * hw + x) * cols;
        for (int64_t dy = 0; dy < k; ++dy)
          for (int64_t dx = 0; dx < k; ++dx, dst += ci) {
            const int64_t iy = y + dy - 1, ix = x + dx - 1;
            if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
            const float* src = in + ((b * hw + iy) * hw + ix) * ci;
            for (int64_t c = 0; c < ci; ++c) dst[c] = src[c];
          }
      }
  Eigen::Map<const RowMajor> mw(kernel, cols, co);
  Eigen::Map<RowMajor> mo(out, rows, co);
  mo.noalias() = mp * mw;
}

const char* NativeEigenDescription() {
  static char text[160];
  std::snprintf(text, sizeof text, "Eigen %d.%d.%d -march=native (SIMD: %s)", EIGEN_WORLD_VERSION,
                EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse());
  return text;
}

}  // namespace kiln::bench
