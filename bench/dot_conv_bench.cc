// kiln_dot_conv_bench [repetitions]: f32 dot (1024x1024x1024) and a 3x3
// SAME convolution (batch 8, 56x56, 64->64 channels, NHWC) through the
// runtime/kernels kernels, next to a direct single-threaded Eigen call built
// for this host's best ISA (-march=native, dot_conv_eigen_native.cc) for the
// same math in the same run. Each configuration runs in a child process of
// this one (the ISA level and the host cores are fixed per process): every
// level this CPU runs on one host core (KILN_HOST_THREADS=1), then the level
// the dispatcher picks on every host core. Each child alternates its kernel
// and the baseline, best of `repetitions` each.
// Prints GFLOP/s of each and the ratio against its target: >= 0.8x Eigen on
// one core, >= 1.7x on two. Never fails on timing; exits non-zero only if a
// kernel returns an error or the results disagree.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/host_cores.h"
#include "bench/dot_conv_eigen_native.h"
#include "bench/run_in_child.h"
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

double Seconds(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Best wall times of `reps` runs of kiln and of baseline, alternating so
// that load from other processes hits both alike.
std::pair<double, double> BestSeconds(int reps, const std::function<void()>& kiln,
                                      const std::function<void()>& baseline) {
  double kiln_best = 1e30, baseline_best = 1e30;
  for (int i = 0; i < reps; ++i) {
    kiln_best = std::min(kiln_best, Seconds(kiln));
    baseline_best = std::min(baseline_best, Seconds(baseline));
  }
  return {kiln_best, baseline_best};
}

float MaxAbsDiff(const Literal& a, const std::vector<float>& b) {
  float diff = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    diff = std::max(diff, std::abs(a.Get<float>(i) - b[i]));
  }
  return diff;
}

// The target ratio against one-core Eigen on `cores` host cores; 0: none.
double TargetRatio(int cores) { return cores == 1 ? 0.8 : cores == 2 ? 1.7 : 0; }

bool Report(const char* name, double flops, double kiln_s, double eigen_s, float diff) {
  const double kiln_gflops = flops / kiln_s * 1e-9, eigen_gflops = flops / eigen_s * 1e-9;
  const double ratio = kiln_gflops / eigen_gflops;
  const std::string level(kiln::runtime::IsaLevelName(kiln::runtime::ActiveIsaLevel()));
  const int cores = kiln::HostCores::Get().total();
  const double target = TargetRatio(cores);
  char verdict[32] = "";
  if (target > 0) {
    std::snprintf(verdict, sizeof verdict, "(%s %.1f%s)", ratio >= target ? ">=" : "<", target,
                  ratio >= target ? " ok" : "");
  }
  std::printf("%-33s %-8s %d core%s kiln %7.2f GFLOP/s (%7.1f ms)  eigen-native 1 core %7.2f GFLOP/s "
              "(%7.1f ms)  ratio %.2fx %s  max|diff| %.2g\n",
              name, level.c_str(), cores, cores == 1 ? " " : "s", kiln_gflops, kiln_s * 1e3,
              eigen_gflops, eigen_s * 1e3, ratio, verdict, diff);
  return diff < 1e-2f;
}

// Moves a kernel's result into `out`; false (and the error printed) when it
// failed.
bool Keep(kiln::Result<Literal> result, Literal& out) {
  if (!result) {
    std::fprintf(stderr, "%s\n", result.error().ToString().c_str());
    return false;
  }
  out = std::move(*result);
  return true;
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
  std::vector<float> eigen_out(n * n);
  auto [kiln_s, eigen_s] = BestSeconds(
      reps,
      [&] { ok = Keep(kiln::runtime::EvalDot(*(*module)->entry()->root(), args, ctx), kiln_out) && ok; },
      [&] {
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
  const int64_t rows = batch * hw * hw, cols = k * k * ci;
  std::vector<float> patches(rows * cols), eigen_out(rows * co);
  auto [kiln_s, eigen_s] = BestSeconds(
      reps,
      [&] { ok = Keep(kiln::runtime::EvalConvolution(*(*module)->entry()->root(), args, ctx), kiln_out) && ok; },
      [&] {
        kiln::bench::NativeConv3x3Nhwc(reinterpret_cast<const float*>(x.data().data()),
                                       reinterpret_cast<const float*>(w.data().data()), eigen_out.data(),
                                       patches.data(), batch, hw, ci, co);
      });
  return ok && Report("conv f32 3x3 8x56x56x64->64 NHWC", 2.0 * rows * cols * co, kiln_s,
                      eigen_s, MaxAbsDiff(kiln_out, eigen_out));
}


// Runs this benchmark again with KILN_ISA=level, KILN_HOST_THREADS=cores
// (0: every core) and the given repetitions; true when the child exits 0.
bool RunInChild(IsaLevel level, int cores, int reps) {
  std::optional<std::string> threads;
  if (cores > 0) threads = std::to_string(cores);
  return kiln::bench::RunSelfInChild(
      {{"KILN_ISA", std::string(kiln::runtime::IsaLevelName(level))}, {"KILN_HOST_THREADS", threads}},
      {std::to_string(reps), "--one-level"});
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  if (argc > 2 && std::string(argv[2]) == "--one-level") {
    const bool dot_ok = BenchDot(reps);
    const bool conv_ok = BenchConv(reps);
    return dot_ok && conv_ok ? 0 : 1;
  }
  unsetenv("KILN_HOST_THREADS");
  const IsaLevel best = kiln::runtime::BestRunnableIsaLevel();
  const int host_cores = kiln::HostCores::Get().total();
  std::printf("best of %d; eigen-native: %s, one core; kiln picks %s on this CPU, %d host core%s\n",
              reps, kiln::bench::NativeEigenDescription(),
              std::string(kiln::runtime::IsaLevelName(best)).c_str(), host_cores,
              host_cores == 1 ? "" : "s");
  bool ok = true;
  for (IsaLevel level : kiln::runtime::kAllIsaLevels) {
    if (!kiln::runtime::IsaLevelRunnable(level)) continue;
    ok = RunInChild(level, 1, reps) && ok;
  }
  if (host_cores > 1) ok = RunInChild(best, 0, reps) && ok;
  return ok ? 0 : 1;
}
