// kiln_dot_conv_bench [repetitions]: f32 dot (1024x1024x1024) and a 3x3
// SAME convolution (batch 8, 56x56, 64->64 channels, NHWC) through the
// runtime/kernels kernels at each ISA level this CPU runs, next to a direct
// single-threaded Eigen call built for this host's best ISA (-march=native,
// dot_conv_eigen_native.cc) for the same math in the same run. Each level
// runs in a child process of this one with KILN_ISA set (the level is fixed
// per process); each child times its level and the baseline, interleaved.
// Prints GFLOP/s of each and the ratio (target >= 0.8x at the level the
// dispatcher picks). Never fails on timing; exits non-zero only if a kernel
// returns an error or the results disagree.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "bench/dot_conv_eigen_native.h"
#include "compiler/hlo/parser.h"
#include "runtime/kernels/isa_level.h"
#include "runtime/kernels/kernels.h"

namespace {

using kiln::hlo::Literal;
using kiln::hlo::PrimitiveType;
using kiln::hlo::Shape;
using kiln::runtime::IsaLevel;

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
  const std::string level(kiln::runtime::IsaLevelName(kiln::runtime::ActiveIsaLevel()));
  std::printf("%-33s %-8s kiln %7.2f GFLOP/s (%7.1f ms)  eigen-native %7.2f GFLOP/s (%7.1f ms)  "
              "ratio %.2fx %s  max|diff| %.2g\n",
              name, level.c_str(), kiln_gflops, kiln_s * 1e3, eigen_gflops, eigen_s * 1e3,
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
    kiln::bench::NativeSquareGemm(reinterpret_cast<const float*>(a.data().data()),
                                  reinterpret_cast<const float*>(b.data().data()), eigen_out.data(), n);
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
  const int64_t rows = batch * hw * hw, cols = k * k * ci;
  std::vector<float> patches(rows * cols), eigen_out(rows * co);
  double eigen_s = BestSeconds(reps, [&] {
    kiln::bench::NativeConv3x3Nhwc(reinterpret_cast<const float*>(x.data().data()),
                                   reinterpret_cast<const float*>(w.data().data()), eigen_out.data(),
                                   patches.data(), batch, hw, ci, co);
  });
  return ok && Report("conv f32 3x3 8x56x56x64->64 NHWC", 2.0 * rows * cols * co, kiln_s,
                      eigen_s, MaxAbsDiff(kiln_out, eigen_out));
}


// Runs this benchmark again with KILN_ISA=level and the given repetitions;
// true when the child exits 0.
bool RunLevelInChild(IsaLevel level, int reps) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return false;
  }
  if (pid == 0) {
    const std::string name(kiln::runtime::IsaLevelName(level)), reps_arg = std::to_string(reps);
    setenv("KILN_ISA", name.c_str(), 1);
    const char* args[] = {"kiln_dot_conv_bench", reps_arg.c_str(), "--one-level", nullptr};
    execv("/proc/self/exe", const_cast<char* const*>(args));
    std::perror("execv /proc/self/exe");
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  if (argc > 2 && std::string(argv[2]) == "--one-level") {
    const bool dot_ok = BenchDot(reps);
    const bool conv_ok = BenchConv(reps);
    return dot_ok && conv_ok ? 0 : 1;
  }
  std::printf("single-threaded, best of %d; eigen-native: %s; kiln picks %s on this CPU\n", reps,
              kiln::bench::NativeEigenDescription(),
              std::string(kiln::runtime::IsaLevelName(kiln::runtime::BestRunnableIsaLevel())).c_str());
  bool ok = true;
  for (IsaLevel level : kiln::runtime::kAllIsaLevels) {
    if (!kiln::runtime::IsaLevelRunnable(level)) continue;
    ok = RunLevelInChild(level, reps) && ok;
  }
  return ok ? 0 : 1;
}
