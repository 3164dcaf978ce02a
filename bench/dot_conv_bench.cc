// kiln_dot_conv_bench [repetitions]: f32 dot (1024x1024x1024) and a 3x3
// SAME convolution (batch 8, 56x56, 64->64 channels, NHWC) through the
// runtime/kernels kernels, next to a direct single-threaded Eigen call for
// the same math in the same process. Prints GFLOP/s of each and the ratio
// (target >= 0.8x). Never fails on timing; exits non-zero only if a kernel
// returns an error or the results disagree.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "compiler/hlo/parser.h"
#include "runtime/kernels/kernels.h"

namespace {

using kiln::hlo::Literal;
using kiln::hlo::PrimitiveType;
using kiln::hlo::Shape;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Kernels here call no computations; the context only counts.
class BenchContext : public kiln::runtime::EvalContext {
 public:
  kiln::Result<Literal> Call(const kiln::hlo::Computation&,
                             std::span<const Literal* const>) override {
    return kiln::InternalError("bench context runs no computations");
  }
  kiln::Status Charge(int64_t) override { return kiln::Ok(); }
  uint64_t NextRngSeed() override { return 0; }
};

Literal RandomF32(std::vector<int64_t> dims, uint32_t seed) {
  Literal lit(Shape(PrimitiveType::kF32, std::move(dims)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.Set<float>(i, dist(rng));
  return lit;
}

// Best wall time of `reps` runs of f, in seconds.
double BestSeconds(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    best = std::min(best, d.count());
  }
  return best;
}

float MaxAbsDiff(const Literal& a, const std::vector<float>& b) {
  float diff = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    diff = std::max(diff, std::abs(a.Get<float>(i) - b[i]));
  }
  return diff;
}

bool Report(const char* name, double flops, double kiln_s, double eigen_s, float diff) {
  const double kiln_gflops = flops / kiln_s * 1e-9, eigen_gflops = flops / eigen_s * 1e-9;
  std::printf("%-36s kiln %7.2f GFLOP/s (%7.1f ms)  eigen %7.2f GFLOP/s (%7.1f ms)  "
              "ratio %.2fx %s  max|diff| %.2g\n",
              name, kiln_gflops, kiln_s * 1e3, eigen_gflops, eigen_s * 1e3,
              kiln_gflops / eigen_gflops, kiln_gflops / eigen_gflops >= 0.8 ? "(>= 0.8 ok)" : "(< 0.8)",
              diff);
  return diff < 1e-2f;
}

bool BenchDot(int reps) {
  constexpr int64_t n = 1024;
  auto module = kiln::hlo::ParseModule(R"(
HloModule dot_bench
ENTRY e {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  if (!module) {
    std::fprintf(stderr, "%s\n", module.error().ToString().c_str());
    return false;
  }
  Literal a = RandomF32({n, n}, 1), b = RandomF32({n, n}, 2);
  const Literal* args[] = {&a, &b};
  BenchContext ctx;
  Literal kiln_out;
  bool ok = true;
  double kiln_s = BestSeconds(reps, [&] {
    auto r = kiln::runtime::EvalDot(*(*module)->entry()->root(), args, ctx);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().ToString().c_str());
      ok = false;
      return;
    }
    kiln_out = std::move(*r);
  });
  std::vector<float> eigen_out(n * n);
  double eigen_s = BestSeconds(reps, [&] {
    Eigen::Map<const RowMajor> ma(reinterpret_cast<const float*>(a.data().data()), n, n);
    Eigen::Map<const RowMajor> mb(reinterpret_cast<const float*>(b.data().data()), n, n);
    Eigen::Map<RowMajor> mc(eigen_out.data(), n, n);
    mc.noalias() = ma * mb;
  });
  return ok && Report("dot f32 1024x1024x1024", 2.0 * n * n * n, kiln_s, eigen_s,
                      MaxAbsDiff(kiln_out, eigen_out));
}

bool BenchConv(int reps) {
  constexpr int64_t batch = 8, hw = 56, ci = 64, co = 64, k = 3;
  auto module = kiln::hlo::ParseModule(R"(
HloModule conv_bench
ENTRY e {
  x = f32[8,56,56,64] parameter(0)
  w = f32[3,3,64,64] parameter(1)
  ROOT c = f32[8,56,56,64] convolution(x, w), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f
})");
  if (!module) {
    std::fprintf(stderr, "%s\n", module.error().ToString().c_str());
    return false;
  }
  Literal x = RandomF32({batch, hw, hw, ci}, 3), w = RandomF32({k, k, ci, co}, 4);
  const Literal* args[] = {&x, &w};
  BenchContext ctx;
  Literal kiln_out;
  bool ok = true;
  double kiln_s = BestSeconds(reps, [&] {
    auto r = kiln::runtime::EvalConvolution(*(*module)->entry()->root(), args, ctx);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().ToString().c_str());
      ok = false;
      return;
    }
    kiln_out = std::move(*r);
  });
  // Baseline: one im2col over the whole batch and one Eigen GEMM against the
  // HWIO kernel, which is already a [9*64, 64] row-major matrix.
  const int64_t rows = batch * hw * hw, cols = k * k * ci;
  std::vector<float> patches, eigen_out(rows * co);
  const float* in = reinterpret_cast<const float*>(x.data().data());
  double eigen_s = BestSeconds(reps, [&] {
    patches.assign(rows * cols, 0.0f);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t y = 0; y < hw; ++y)
        for (int64_t xx = 0; xx < hw; ++xx) {
          float* dst = patches.data() + ((b * hw + y) * hw + xx) * cols;
          for (int64_t dy = 0; dy < k; ++dy)
            for (int64_t dx = 0; dx < k; ++dx, dst += ci) {
              const int64_t iy = y + dy - 1, ix = xx + dx - 1;
              if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
              std::copy_n(in + ((b * hw + iy) * hw + ix) * ci, ci, dst);
            }
        }
    Eigen::Map<const RowMajor> mp(patches.data(), rows, cols);
    Eigen::Map<const RowMajor> mw(reinterpret_cast<const float*>(w.data().data()), cols, co);
    Eigen::Map<RowMajor> mo(eigen_out.data(), rows, co);
    mo.noalias() = mp * mw;
  });
  return ok && Report("conv f32 3x3 8x56x56x64->64 NHWC", 2.0 * rows * cols * co, kiln_s,
                      eigen_s, MaxAbsDiff(kiln_out, eigen_out));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::printf("single-threaded, best of %d (Eigen %d.%d.%d, SIMD: %s)\n", reps,
              EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
              Eigen::SimdInstructionSetsInUse());
  const bool dot_ok = BenchDot(reps);
  const bool conv_ok = BenchConv(reps);
  return dot_ok && conv_ok ? 0 : 1;
}
