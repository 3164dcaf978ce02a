// kiln_tune_steps_bench: the autotuner on the corpus's training steps (the
// programs where the device time is), each on its own slice, beside the
// heuristic plan timed in the same run and a lower bound for the module.
//
//   kiln_tune_steps_bench [--corpus DIR] [--budget SECONDS] [--seed S] [--min-us US]
//                         [--limit N] [--match TEXT] [--bounds-only]
//
// Every module of corpus/hlo/torchxla-dumps and corpus/hlo/jax-dumps
// (sorted, or those whose name holds --match) that compiles for its own
// device count on the most compact v5e slice (as `kiln compile` does; on
// v5p, else TPU7x, when a v5e chip cannot hold its share) and
// whose heuristic executable takes at least --min-us (default 1000) µs of
// simulated device time is tuned for --budget seconds (default 120) with a
// fixed seed: kiln tune's tuner and runner, fusion changes checked whole
// where the program can be evaluated here and kernel by kernel where it
// cannot (too large, or a slice's per-chip program).
//
// Per module it prints the heuristic and tuned device time (the simulator's
// time of one run, what an execute reports), their ratio, two lower bounds
// with the heuristic's ratio to each: the kernels' (each of the heuristic's
// kernels at its roofline: its FLOPs at the peak they run at or its ideal
// bytes at the HBM bandwidth, whichever is longer; loops by their trips;
// collectives hidden behind compute; no overheads: what tiles could reach
// without changing fusion) and the module's (all FLOPs at peak, or its
// parameters and results moved once: what no plan can beat), the gain from
// tiles and from fusion, trials, seconds, candidates rejected by
// verification and how the accepted plan was verified. Where the heuristic
// is within 5% of a bound the row says so. At the end: the
// geomean, the worst ratio and the target (geomean >= 1.20x, none slower).
// --bounds-only prints the heuristic times and bounds without tuning.
// Never fails on timing; exit status 1 when the corpus cannot be read.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/training_graphs.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_module.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/simulate_as_run.h"
#include "server/service/tune_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace kiln;

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

// A step as the heuristic compiles it: its slice, its device time and two
// lower bounds.
struct Step {
  driver::CompileOptions options;
  double heuristic_us = 0;
  double kernel_bound_us = 0;
  double module_bound_us = 0;
  double exposed_ici_us = 0;  // device time the core waits on collectives
};

double ComputeSeconds(const runtime::timing::KernelProfile& k, const runtime::ChipSpec& chip) {
  return k.peak_seconds > 0 ? k.peak_seconds : k.flops / chip.bf16_flops;
}

// The heuristic's own kernels at their rooflines: each at the longer of its
// FLOPs at their peak and its ideal bytes at the HBM bandwidth (loops by
// their trips, collectives hidden, no overheads). What tiles and layouts
// could reach without changing fusion; fusion, which removes kernels'
// traffic, may go below it.
double KernelBoundUs(const runtime::timing::DeviceProfile& profile, const runtime::ChipSpec& chip) {
  double seconds = 0;
  for (const runtime::timing::KernelProfile& k : profile.kernels) {
    seconds += std::max(ComputeSeconds(k, chip), k.ideal_bytes / chip.hbm_bytes_per_s);
  }
  return seconds * 1e6;
}

// The step itself, whatever its kernels: all its FLOPs at their peak, or
// its parameters and results moved once at the HBM bandwidth, whichever is
// longer. A bound no plan can beat on this model.
double ModuleBoundUs(const runtime::timing::DeviceProfile& profile, const runtime::Program& program,
                     const runtime::ChipSpec& chip) {
  double compute = 0;
  for (const runtime::timing::KernelProfile& k : profile.kernels) compute += ComputeSeconds(k, chip);
  double bytes = 0;
  for (const runtime::ProgramBuffer& b : program.buffers) {
    if (b.kind == runtime::BufferKind::kParameter || b.kind == runtime::BufferKind::kOutput) {
      bytes += static_cast<double>(b.size_bytes);
    }
  }
  return std::max(compute, bytes / chip.hbm_bytes_per_s) * 1e6;
}

// Device time in which the core computes nothing: what it waits on
// collectives (and loop-body barriers) that it could not hide. What a better
// schedule could win at most.
double ExposedIciUs(const runtime::timing::DeviceProfile& profile) {
  double core = 0;
  for (const runtime::timing::KernelProfile& k : profile.kernels) {
    if (!k.steps.empty()) {
      for (const auto& s : k.steps) core += s.bound == runtime::timing::Bound::kIci ? 0 : s.seconds;
    } else if (!k.on_links) {
      core += k.seconds;
    }
  }
  return std::max(0.0, profile.seconds - core) * 1e6;
}

std::optional<Step> MeasureOn(const fs::path& path, const runtime::ChipSpec& chip) {
  auto module = bench::LoadTrainingGraph(path);
  if (!module) return std::nullopt;
  Step step;
  step.options.chip = std::string(chip.name);
  if (!driver::ResolveTopology(*module, step.options)) return std::nullopt;
  auto out = driver::CompileModule(*module, step.options);
  if (!out || out->estimate_source != "simulator") return std::nullopt;
  auto loaded = runtime::LoadedProgram::FromBytes(out->executable);
  if (!loaded) return std::nullopt;
  auto profile = runtime::timing::SimulateAsRun(**loaded);
  if (!profile) return std::nullopt;
  step.heuristic_us = profile->seconds * 1e6;
  step.kernel_bound_us = KernelBoundUs(*profile, chip);
  step.module_bound_us = ModuleBoundUs(*profile, (*loaded)->program(), chip);
  step.exposed_ici_us = ExposedIciUs(*profile);
  return step;
}

// On the first chip whose slice holds the step: v5e, else the chips with
// more HBM per chip (the Llama 3.1 and Mixtral steps do not fit a v5e).
std::optional<Step> Measure(const fs::path& path) {
  for (const char* name : {"v5e", "v5p", "tpu7x"}) {
    if (std::optional<Step> step = MeasureOn(path, *runtime::FindChip(name))) return step;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln_tune_steps_bench: autotuned vs heuristic device time on the corpus's training steps"};
  std::string corpus = KILN_CORPUS_DIR;
  double budget = 120;
  uint64_t seed = 1;
  size_t limit = 0;
  double min_us = 1000;
  std::string match;
  bool bounds_only = false;
  app.add_option("--corpus", corpus, "Corpus directory (with hlo/torchxla-dumps, hlo/jax-dumps)");
  app.add_option("--budget", budget, "Seconds per module")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--seed", seed, "Search seed");
  app.add_option("--limit", limit, "Tune at most this many modules (0: all)");
  app.add_option("--min-us", min_us, "Skip modules whose heuristic takes less device time");
  app.add_option("--match", match, "Only modules whose file name contains this");
  app.add_flag("--bounds-only", bounds_only, "Print heuristic times and lower bounds without tuning");
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> files;
  for (const char* folder : {"hlo/torchxla-dumps", "hlo/jax-dumps"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(corpus) / folder, ec)) {
      if (entry.path().extension() != ".hlo") continue;
      if (!match.empty() && entry.path().filename().string().find(match) == std::string::npos) continue;
      files.push_back(entry.path());
    }
    if (ec) {
      std::fprintf(stderr, "kiln_tune_steps_bench: cannot read %s/%s: %s\n", corpus.c_str(), folder,
                   ec.message().c_str());
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  std::printf("kiln_tune_steps_bench: v5e slices (v5p or tpu7x where a v5e slice cannot hold the step), %.0f s per module, seed %llu, steps with >= %.0f us of heuristic "
              "device time\n",
              budget, static_cast<unsigned long long>(seed), min_us);
  std::printf("%-36s %-11s %12s %12s %6s %12s %6s %12s %6s | %9s %9s %9s | %6s %6s %4s | %s\n", "module", "slice",
              "heuristic us", "tuned us", "ratio", "kernel bnd", "h/kb", "module bnd", "h/mb", "tile gain",
              "fuse gain", "sched gain", "trials", "secs", "rej", "verified / note");
  double log_sum = 0, worst = std::numeric_limits<double>::infinity();
  int tuned = 0, skipped = 0, failed = 0, near_bound = 0;
  for (const fs::path& path : files) {
    if (limit > 0 && static_cast<size_t>(tuned) >= limit) break;
    std::optional<Step> step = Measure(path);
    if (!step || step->heuristic_us < min_us) {
      ++skipped;
      continue;
    }
    const std::string name = bench::ShortGraphName(path.filename().string(), 36);
    const std::string slice =
        step->options.chip + " " + (step->options.topology.empty() ? "1" : step->options.topology);
    const double headroom = step->heuristic_us / std::max(step->kernel_bound_us, 1e-9);
    const double module_headroom = step->heuristic_us / std::max(step->module_bound_us, 1e-9);
    const std::string bound_note =
        std::string(headroom <= 1.05 ? "; heuristic within 5% of its kernels' bound" : "") +
        (module_headroom <= 1.05 ? "; heuristic within 5% of the module's bound" : "");
    if (bounds_only) {
      std::printf("%-36s %-11s %12.1f %12s %6s %12.1f %6.2f %12.1f %6.2f | exposed ici %.1f us%s\n", name.c_str(),
                  slice.c_str(), step->heuristic_us, "-", "-", step->kernel_bound_us, headroom, step->module_bound_us,
                  module_headroom, step->exposed_ici_us, bound_note.c_str());
      ++tuned;
      continue;
    }
    auto module = bench::LoadTrainingGraph(path);
    service::SimulatedRunner runner(*runtime::FindChip(step->options.chip));
    runner.set_evaluation_limit(budget / 3);  // as kiln tune does
    autotune::TuneOptions options;
    options.seed = seed;
    options.max_seconds = budget;
    auto result = autotune::Tune(*module, step->options, runner, nullptr, options);
    if (!result) {
      std::printf("%-36s tuning failed: %s\n", name.c_str(), result.error().ToString().c_str());
      ++failed;
      continue;
    }
    const autotune::TuneResult& r = *result;
    const double ratio = r.heuristic_us / r.tuned_us;
    std::string note = r.accepted ? r.verification : "kept heuristic";
    if (!r.fusion_searched) note += " (no fusion search: " + r.fusion_note.substr(0, 60) + ")";
    if (r.kept_heuristic_instructions > 0) {
      note += "; " + std::to_string(r.kept_heuristic_instructions) + " instructions kept unchecked";
    }
    if (r.body_computations > 0) {
      note += "; bodies: " + std::to_string(r.body_computations) + " searched, " +
              std::to_string(r.body_moves_measured) + " moves, " + std::to_string(r.body_flips.size()) + " flips, " +
              std::to_string(static_cast<int64_t>(r.body_gain_us)) + " us";
    }
    if (!r.schedule_note.empty()) {
      char exposed[96];
      std::snprintf(exposed, sizeof(exposed), "; schedule (%.0f us waited on links): ", r.exposed_ici_us);
      note += exposed + r.schedule_note;
    }
    char checks[64];
    std::snprintf(checks, sizeof(checks), "; prepare %.1f s, checks %.1f s", r.ms.prepare / 1000, r.ms.verify / 1000);
    note += checks + bound_note;
    std::printf("%-36s %-11s %12.1f %12.1f %6.3f %12.1f %6.2f %12.1f %6.2f | %9.1f %9.1f %9.1f | %6lld %6.1f %4lld | %s\n",
                name.c_str(), slice.c_str(), r.heuristic_us, r.tuned_us, ratio, step->kernel_bound_us, headroom,
                step->module_bound_us, module_headroom, r.tiling_gain_us,
                r.fusion_gain_us + r.body_gain_us, r.schedule_gain_us, static_cast<long long>(r.trials), r.seconds,
                static_cast<long long>(r.rejected_by_verification), note.c_str());
    std::fflush(stdout);
    near_bound += module_headroom <= 1.05;
    log_sum += std::log(ratio);
    worst = std::min(worst, ratio);
    ++tuned;
  }
  if (tuned == 0) {
    std::printf("no module tuned (%d below %.0f us or not compiling, %d failed)\n", skipped, min_us, failed);
    return 0;
  }
  std::printf("\n%d steps (%d skipped: under %.0f us, not compiling or not timed without values; %d failed)\n", tuned,
              skipped, min_us, failed);
  if (!bounds_only) {
    std::printf("geomean tuned/heuristic speedup %.3fx (target >= 1.20x); worst %.3fx (target >= 1.0x, never slower); "
                "%d heuristics within 5%% of their module's bound\n",
                std::exp(log_sum / tuned), worst, near_bound);
  }
  return 0;
}
