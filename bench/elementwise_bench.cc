// kiln_elementwise_bench: throughput of the op evaluator on a chain of 8
// elementwise ops, next to a plain triad loop over the same sizes.
//
//   kiln_elementwise_bench [elements] [repetitions]
//
// elements defaults to 16M f32 values, repetitions to 10 (best run of each
// side counts; the sides alternate).
// Both sides move the same bytes: two f32 inputs read, one f32 output
// written (triad: a[i] = b[i] + s * c[i], one core, built for this host's
// best ISA in triad_native.cc; chain: EvaluateModule on a parsed module of 8
// elementwise ops over two parameters, including allocating its result;
// freed literal blocks are reused as in any repeated evaluation). The chain
// runs on one host core (KILN_HOST_THREADS=1), then on all of them, each in
// a child process of this one (the host cores are fixed per process).
// Prints GB/s (10^9 bytes per second) of each and the ratio; the target is a
// ratio of at least 0.5. Then row and column sums over the first input as
// f32[elements / 1024, 1024], in GB/s read against the triad (no target). Never fails on timing: exit status 1
// only when the module does not parse or evaluate, or the result is wrong.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "base/host_cores.h"
#include "bench/run_in_child.h"
#include "bench/triad_native.h"
#include "compiler/hlo/parser.h"
#include "runtime/eval/evaluator.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kTargetRatio = 0.5;

volatile float g_sink = 0;

std::string ChainModule(int64_t n) {
  const std::string t = "f32[" + std::to_string(n) + "]";
  return "HloModule chain\n\nENTRY e {\n"
         "  x = " + t + " parameter(0)\n"
         "  y = " + t + " parameter(1)\n"
         "  half = f32[] constant(0.5)\n"
         "  h = " + t + " broadcast(half), dimensions={}\n"
         "  a = " + t + " add(x, y)\n"
         "  b = " + t + " multiply(a, h)\n"
         "  c = " + t + " subtract(b, y)\n"
         "  d = " + t + " maximum(c, x)\n"
         "  e = " + t + " multiply(d, d)\n"
         "  f = " + t + " add(e, a)\n"
         "  g = " + t + " negate(f)\n"
         "  ROOT r = " + t + " abs(g)\n"
         "}\n";
}

float Expected(float x, float y) {
  float a = x + y;
  float d = std::max(a * 0.5f - y, x);
  return std::abs(-(d * d + a));
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A sum over dimension `dim` of f32[rows, 1024] (1: row sums, 0: column
// sums).
std::string ReduceModule(int64_t rows, int dim) {
  const int64_t kept = dim == 1 ? rows : 1024;
  return "HloModule sums\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n"
         "  x = f32[" + std::to_string(rows) + ",1024] parameter(0)\n"
         "  z = f32[] constant(0)\n"
         "  ROOT r = f32[" + std::to_string(kept) + "] reduce(x, z), dimensions={" + std::to_string(dim) +
         "}, to_apply=add\n}\n";
}

// Best seconds of `reps` evaluations of a reduction of `input`; negative
// when it fails.
double ReduceSeconds(const kiln::hlo::Literal& input, int dim, int reps) {
  auto module = kiln::hlo::ParseModule(ReduceModule(input.shape().dimensions(0), dim));
  if (!module) return -1;
  double best = std::numeric_limits<double>::infinity();
  const std::vector<kiln::hlo::Literal> args = {input};
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    auto result = kiln::runtime::EvaluateModule(**module, args);
    if (!result) return -1;
    best = std::min(best, Seconds(start));
  }
  return best;
}

// Times both sides in this process; 0 when the chain's result is right.
int Measure(int64_t n, int reps) {
  const double bytes = 3.0 * sizeof(float) * static_cast<double>(n);

  // Baseline: the triad over preallocated, touched arrays.
  std::vector<float> a(n), b(n), c(n);
  for (int64_t i = 0; i < n; ++i) {
    b[i] = static_cast<float>(i % 1000) * 0.001f;
    c[i] = static_cast<float>(i % 777) * 0.002f;
  }
  auto module = kiln::hlo::ParseModule(ChainModule(n));
  if (!module) {
    std::fprintf(stderr, "parse: %s\n", module.error().ToString().c_str());
    return 1;
  }
  kiln::hlo::Shape shape(kiln::hlo::PrimitiveType::kF32, {n});
  std::vector<kiln::hlo::Literal> args;
  args.emplace_back(shape);
  args.emplace_back(shape);
  for (int64_t i = 0; i < n; ++i) {
    args[0].Set<float>(i, b[i] - 0.3f);
    args[1].Set<float>(i, c[i]);
  }
  // The two sides alternate, so that load from other processes on a shared
  // machine hits both alike; the best run of each counts.
  double triad_best = std::numeric_limits<double>::infinity();
  double chain_best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < reps; ++r) {
    const float s = 1.5f + static_cast<float>(r);
    auto triad_start = Clock::now();
    kiln::bench::NativeTriad(a.data(), b.data(), c.data(), s, n);
    triad_best = std::min(triad_best, Seconds(triad_start));
    g_sink = g_sink + a[n / 2];

    auto chain_start = Clock::now();
    auto result = kiln::runtime::EvaluateModule(**module, args);
    const double t = Seconds(chain_start);
    if (!result) {
      std::fprintf(stderr, "evaluate: %s\n", result.error().ToString().c_str());
      return 1;
    }
    chain_best = std::min(chain_best, t);
    for (int64_t i : {int64_t{0}, n / 3, n - 1}) {
      if (result->Get<float>(i) != Expected(args[0].Get<float>(i), args[1].Get<float>(i))) {
        std::fprintf(stderr, "wrong result at %lld\n", static_cast<long long>(i));
        return 1;
      }
    }
  }

  const double triad_gbps = bytes / triad_best / 1e9;
  const double chain_gbps = bytes / chain_best / 1e9;
  const double ratio = chain_gbps / triad_gbps;
  const int cores = kiln::HostCores::Get().total();
  std::printf("%d host core%s\n", cores, cores == 1 ? "" : "s");
  std::printf("  triad baseline    %8.3f ms  %6.2f GB/s (one core)\n", triad_best * 1e3, triad_gbps);
  std::printf("  8-op chain (eval) %8.3f ms  %6.2f GB/s\n", chain_best * 1e3, chain_gbps);
  std::printf("  ratio             %.2fx of triad (target >= %.2fx: %s)\n", ratio, kTargetRatio,
              ratio >= kTargetRatio ? "met" : "NOT met");
  // Reductions read their input once: their GB/s against the triad's.
  kiln::hlo::Literal matrix = kiln::hlo::Literal::FromData(
      kiln::hlo::Shape(kiln::hlo::PrimitiveType::kF32, {n / 1024, 1024}), args[0].data());
  for (int dim : {1, 0}) {
    const double seconds = ReduceSeconds(matrix, dim, reps);
    if (seconds < 0) {
      std::fprintf(stderr, "reduce over dimension %d failed\n", dim);
      return 1;
    }
    const double gbps = static_cast<double>(matrix.data().size()) / seconds / 1e9;
    std::printf("  %s sums (eval)  %8.3f ms  %6.2f GB/s read (%.2fx of triad)\n", dim == 1 ? "row   " : "column",
                seconds * 1e3, gbps, gbps / triad_gbps);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{16} << 20;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  if (argc > 3 && std::string(argv[3]) == "--measure") return Measure(n, reps);
  unsetenv("KILN_HOST_THREADS");
  const int cores = kiln::HostCores::Get().total();
  std::printf("elements          %lld f32 (%.0f MB moved per run); triad built with %s\n",
              static_cast<long long>(n), 3.0 * sizeof(float) * static_cast<double>(n) / 1e6,
              kiln::bench::NativeTriadFlags());
  const std::vector<std::string> args = {std::to_string(n), std::to_string(reps), "--measure"};
  bool ok = kiln::bench::RunSelfInChild({{"KILN_HOST_THREADS", "1"}}, args);
  if (cores > 1) ok = kiln::bench::RunSelfInChild({{"KILN_HOST_THREADS", std::nullopt}}, args) && ok;
  return ok ? 0 : 1;
}
