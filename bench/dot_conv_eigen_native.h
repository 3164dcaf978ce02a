// The baseline of kiln_dot_conv_bench: direct single-threaded Eigen built
// for this host's best ISA (-march=native, dot_conv_eigen_native.cc), in its
// own Eigen namespace (the build defines the macro Eigen to another name) so
// the linker cannot merge its instantiations with kiln's SSE2 Eigen copies.
// It takes raw pointers and instantiates no standard-library templates.
#pragma once

#include <cstdint>

namespace kiln::bench {

// c = a * b for row-major n x n matrices.
void NativeSquareGemm(const float* a, const float* b, float* c, int64_t n);

// A stride-1 3x3 SAME convolution of an NHWC input [batch, hw, hw, ci] with
// an HWIO kernel [3, 3, ci, co] into out [batch, hw, hw, co]: one im2col over
// the whole batch and one GEMM against the kernel, which already is a
// [9 * ci, co] row-major matrix. patches is caller-owned scratch of
// batch * hw * hw * 9 * ci floats, reused across calls.
void NativeConv3x3Nhwc(const float* in, const float* kernel, float* out, float* patches,
                       int64_t batch, int64_t hw, int64_t ci, int64_t co);

// "Eigen <version> -march=native (SIMD: <Eigen's list>)"; static storage.
const char* NativeEigenDescription();

}  // namespace kiln::bench
