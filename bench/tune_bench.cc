// kiln_tune_bench: the autotuner on the corpus's training graphs, against
// the heuristic plan timed in the same run.
//
//   kiln_tune_bench [--corpus DIR] [--budget SECONDS] [--seed S] [--limit N] [--min-us US]
//
// Every module of corpus/hlo/torchxla-dumps and corpus/hlo/jax-dumps
// (sorted) that compiles and whose heuristic executable takes at least
// --min-us (default 50) µs of simulated v5e device time is tuned within
// --budget seconds (default 20) with a fixed seed (kiln tune's tuner and
// runner: timing simulator, evaluator output check). Prints per module the
// heuristic and tuned device time, their ratio, trials, where the time
// went (prepare, lowering candidates, timing, cost model, output check),
// the gain from tiles and from fusion flips, the cost model's rank
// correlation with the measured kernels (analytic and calibrated), and at
// the end the geomean ratio, the worst ratio and the target (geomean >=
// 1.25x, never slower). Never fails on timing; exit status 1 when the
// corpus cannot be read.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/training_graphs.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/chip/chip_spec.h"
#include "server/service/tune_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace kiln;

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

// The heuristic executable's device time, as `kiln run --timing-only`
// gives it; nullopt when it does not compile or time.
std::optional<double> HeuristicUs(const fs::path& path, const runtime::ChipSpec& chip) {
  auto module = bench::LoadTrainingGraph(path);
  if (!module) return std::nullopt;
  auto out = driver::CompileModule(*module, driver::CompileOptions{});
  if (!out) return std::nullopt;
  service::SimulatedRunner runner(chip);
  auto m = runner.Measure(out->executable, /*strict_tiling=*/false);
  if (!m || !m->ok()) return std::nullopt;
  return m->device_us;
}

std::string Rho(const std::optional<double>& r) {
  if (!r) return "   -";
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%5.2f", *r);
  return buffer;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln_tune_bench: autotuned vs heuristic device time on the corpus's training graphs"};
  std::string corpus = KILN_CORPUS_DIR;
  double budget = 20;
  uint64_t seed = 1;
  size_t limit = 0;
  double min_us = 50;
  app.add_option("--corpus", corpus, "Corpus directory (with hlo/torchxla-dumps, hlo/jax-dumps)");
  app.add_option("--budget", budget, "Seconds per module")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--seed", seed, "Search seed");
  app.add_option("--limit", limit, "Tune at most this many modules (0: all)");
  app.add_option("--min-us", min_us, "Skip modules whose heuristic takes less device time");
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> files;
  for (const char* folder : {"hlo/torchxla-dumps", "hlo/jax-dumps"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(corpus) / folder, ec)) {
      if (entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
    if (ec) {
      std::fprintf(stderr, "kiln_tune_bench: cannot read %s/%s: %s\n", corpus.c_str(), folder, ec.message().c_str());
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  const runtime::ChipSpec& chip = *runtime::FindChip("v5e");

  std::printf("kiln_tune_bench: v5e, %.0f s per module, seed %llu, modules with >= %.0f us of heuristic device time\n",
              budget, static_cast<unsigned long long>(seed), min_us);
  std::printf("%-34s %12s %12s %6s %6s %6s | %7s %7s %7s %7s %7s | %9s %9s | %5s %5s | %s\n", "module",
              "heuristic us", "tuned us", "ratio", "trials", "secs", "prep ms", "lower", "timing", "model", "verify",
              "tile gain", "fuse gain", "rho_a", "rho_c", "note");
  double log_sum = 0, worst = std::numeric_limits<double>::infinity();
  double tile_gain = 0, fusion_gain = 0, heuristic_total = 0;
  kiln::autotune::StageMs total_ms;
  double total_seconds = 0;
  int tuned = 0, skipped = 0, failed = 0;
  for (const fs::path& path : files) {
    if (limit > 0 && static_cast<size_t>(tuned) >= limit) break;
    std::optional<double> heuristic = HeuristicUs(path, chip);
    if (!heuristic || *heuristic < min_us) {
      ++skipped;
      continue;
    }
    auto module = bench::LoadTrainingGraph(path);
    service::SimulatedRunner runner(chip);
    runner.set_evaluation_limit(budget / 3);  // as kiln tune does
    autotune::TuneOptions options;
    options.seed = seed;
    options.max_seconds = budget;
    auto result = autotune::Tune(*module, driver::CompileOptions{}, runner, nullptr, options);
    if (!result) {
      std::printf("%-34s tuning failed: %s\n", bench::ShortGraphName(path.filename().string(), 34).c_str(),
                  result.error().ToString().c_str());
      ++failed;
      continue;
    }
    const autotune::TuneResult& r = *result;
    const double ratio = r.heuristic_us / r.tuned_us;
    std::string note = r.accepted ? (r.edits.flipped_edges.empty() ? "tiles" : "tiles+fusion") : "kept heuristic";
    if (!r.fusion_searched) note += " (no fusion search: " + r.fusion_note.substr(0, 48) + ")";
    std::printf("%-34s %12.1f %12.1f %6.3f %6lld %6.1f | %7.0f %7.0f %7.0f %7.0f %7.0f | %9.1f %9.1f | %s %s | %s\n",
                bench::ShortGraphName(path.filename().string(), 34).c_str(), r.heuristic_us, r.tuned_us, ratio,
                static_cast<long long>(r.trials), r.seconds, r.ms.prepare, r.ms.compile, r.ms.timing, r.ms.model,
                r.ms.verify, r.tiling_gain_us, r.fusion_gain_us, Rho(r.spearman_analytic).c_str(),
                Rho(r.spearman_calibrated).c_str(), note.c_str());
    std::fflush(stdout);
    log_sum += std::log(ratio);
    worst = std::min(worst, ratio);
    tile_gain += r.tiling_gain_us;
    fusion_gain += r.fusion_gain_us;
    heuristic_total += r.heuristic_us;
    total_ms.prepare += r.ms.prepare;
    total_ms.compile += r.ms.compile;
    total_ms.timing += r.ms.timing;
    total_ms.model += r.ms.model;
    total_ms.verify += r.ms.verify;
    total_seconds += r.seconds;
    ++tuned;
  }
  if (tuned == 0) {
    std::printf("no module tuned (%d below %.0f us or not compiling, %d failed)\n", skipped, min_us, failed);
    return 0;
  }
  const double geomean = std::exp(log_sum / tuned);
  const double other_ms = total_seconds * 1000 - total_ms.prepare - total_ms.compile - total_ms.timing -
                          total_ms.model - total_ms.verify;
  std::printf("\n%d modules tuned (%d skipped: under %.0f us or not compiling; %d failed)\n", tuned, skipped, min_us,
              failed);
  std::printf("geomean tuned/heuristic speedup %.3fx (target >= 1.25x); worst %.3fx (target >= 1.0x, never slower)\n",
              geomean, worst);
  std::printf("gain: %.1f us from tiles, %.1f us from fusion flips (of %.1f us heuristic device time)\n", tile_gain,
              fusion_gain, heuristic_total);
  auto share = [&](double ms) { return 100 * ms / (total_seconds * 1000); };
  std::printf("time: %.1f s in all: prepare %.0f%%, lowering candidates %.0f%%, timing %.0f%%, cost model %.0f%%, "
              "output checks %.0f%%, search bookkeeping %.0f%%\n",
              total_seconds, share(total_ms.prepare), share(total_ms.compile), share(total_ms.timing),
              share(total_ms.model), share(total_ms.verify), share(other_ms));
  return 0;
}
