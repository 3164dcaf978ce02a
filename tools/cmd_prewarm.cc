// kiln prewarm PATH... [--db DB | --server URL [--token T]] [--chip C]...
//                      [--plan P] [--topology AxB[xC]] [--jobs N] [--tune BUDGET]
//                      [--stage before|after|all] [--dry-run] [--json]
// Fills the cache from what trainers leave behind (XLA dump folders,
// torch_xla saved graphs, HLO files, zstd or gzip compressed), so the
// compiles a job will ask for are done before it starts. The phases:
// walk the paths (dump_walker.h), read and key every module on --jobs
// workers (module_sources.h, prewarm_jobs.h), drop duplicates and what is
// cached, then compile the rest on --jobs workers, largest first, into a
// store file or a running server (prewarm_target.h). Progress on standard
// error, a summary (or --json) on standard output. Exit 0 when nothing
// failed, 1 when a module failed (the others are stored), 2 for usage errors.
#include <algorithm>
#include <filesystem>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/units.h"
#include "cache/cache_store.h"
#include "compiler/driver/compile_module.h"
#include "runtime/chip/chip_spec.h"
#include "tools/commands.h"
#include "tools/dump_walker.h"
#include "tools/json_error.h"
#include "tools/module_sources.h"
#include "tools/parallel_for.h"
#include "tools/prewarm_jobs.h"
#include "tools/prewarm_progress.h"
#include "tools/prewarm_report.h"
#include "tools/prewarm_server_target.h"
#include "tools/prewarm_store_target.h"
#include "tools/tune_store.h"

namespace kiln::tools {
namespace {

constexpr int kUsageError = 2;

struct PrewarmArgs {
  std::vector<std::string> paths;
  std::string db = std::string(cache::kDefaultStorePath);
  std::string server;
  std::string token;
  std::vector<std::string> chips;
  std::string plan = "heuristic";
  int jobs = 0;
  std::string tune;
  std::string stage = "before";
  std::string topology;
  bool dry_run = false;
  bool json = false;
  uint64_t max_file_bytes = uint64_t{1} << 30;
  std::string timeout = "600s";
  bool db_given = false;
};

// A usage error (exit 2) or a failure of the whole run (exit 1).
struct RunError {
  Error error;
  bool usage = false;
};

// The modules of one file and their keys (or why they have none).
struct KeyedFile {
  FileModules modules;
  std::vector<Result<std::vector<KeyedOptions>>> keys;  // per module
};

using Clock = std::chrono::steady_clock;

// What a dry run against a store that does not exist yet sees: nothing.
class EmptyTarget final : public PrewarmTarget {
 public:
  Result<bool> Contains(const CompileJob&) override { return false; }
  Result<JobOutcome> Make(const CompileJob&) override { return InternalError("a dry run compiles nothing"); }
};

// `look_only`: a dry run's store, opened read-only (no file, log or space
// reserve is created or written).
std::unique_ptr<cache::CacheStore> OpenStore(const std::string& path, Error* error, bool look_only = false) {
  cache::CacheStoreOptions options;
  options.path = look_only ? "file:" + path + "?mode=ro" : path;
  options.create_if_missing = !look_only;
  if (look_only) options.reserve_bytes = 0;
  options.dictionary_training_puts = 0;  // the server trains its dictionary
  Result<std::unique_ptr<cache::CacheStore>> opened = cache::CacheStore::Open(std::move(options));
  if (!opened) {
    *error = opened.error().WithContext("--db " + path);
    return nullptr;
  }
  return *std::move(opened);
}

std::optional<RunError> RunPrewarm(const PrewarmArgs& args, PrewarmReport& report) {
  const Clock::time_point start = Clock::now();
  auto usage = [](std::string message) { return RunError{InvalidArgumentError(std::move(message)), true}; };
  // --- Arguments ---
  if (!args.server.empty() && args.db_given) return usage("--db and --server exclude each other");
  if (!args.server.empty() && !args.tune.empty())
    return usage("--tune needs --db; to tune on a server, run it with --tune-in-background");
  if (args.server.empty() && !args.token.empty()) return usage("--token needs --server");
  if (args.jobs < 0) return usage("--jobs must be at least 1");
  Result<fusion::PlanKind> plan = driver::ParsePlanKind(args.plan);
  if (!plan) return usage(plan.error().message);
  if (!args.tune.empty() && *plan != fusion::PlanKind::kHeuristic)
    return usage("--tune tunes the heuristic plan; it does not go with --plan " + args.plan);
  std::optional<autotune::TuneOptions> tune;
  if (!args.tune.empty()) {
    Result<autotune::TuneOptions> options = TuneOptionsForBudget(args.tune);
    if (!options) return RunError{options.error().WithContext("--tune"), true};
    tune = *options;
  }
  const StageFilter stage = args.stage == "after" ? StageFilter::kAfter
                            : args.stage == "all" ? StageFilter::kAll
                                                  : StageFilter::kBefore;
  std::vector<driver::CompileOptions> options;
  for (const std::string& chip : args.chips.empty() ? std::vector<std::string>{kDefaultChip} : args.chips) {
    driver::CompileOptions one;
    one.chip = chip;
    one.plan = *plan;
    one = driver::NormalizedOptions(one);
    Result<std::string> topology = driver::CanonicalTopology(args.topology, one.chip);
    if (!topology) return usage("--topology: " + topology.error().message);
    one.topology = std::move(*topology);
    if (std::none_of(options.begin(), options.end(), [&](const auto& o) { return o.chip == one.chip; })) {
      options.push_back(one);
      report.chips.push_back(one.chip);
    }
  }
  const int jobs = args.jobs > 0 ? args.jobs : std::max(1u, std::thread::hardware_concurrency());
  const bool show_progress = !args.json;

  // --- The target ---
  std::unique_ptr<cache::CacheStore> store;
  std::unique_ptr<PrewarmTarget> target;
  if (!args.server.empty()) {
    Result<HttpUrl> url = ParseHttpUrl(args.server);
    if (!url) return usage(url.error().message);
    Result<std::chrono::milliseconds> timeout = ParseDuration(args.timeout);
    if (!timeout) return usage("--timeout: " + timeout.error().message);
    auto server = std::make_unique<ServerTarget>(*url, args.token, *timeout);
    if (Status up = server->Check(); !up) return RunError{up.error().WithContext("--server " + args.server)};
    target = std::move(server);
    report.target = "--server " + args.server;
  } else if (args.dry_run && !std::filesystem::exists(args.db)) {
    // A dry run writes nothing: no store yet means nothing is cached.
    target = std::make_unique<EmptyTarget>();
    report.target = "--db " + args.db + " (absent: nothing cached)";
  } else {
    Error error;
    store = OpenStore(args.db, &error, /*look_only=*/args.dry_run);
    if (!store) return RunError{error};
    target = std::make_unique<StoreTarget>(*store, tune);
    report.target = "--db " + args.db;
  }

  // --- Walk, read and key ---
  WalkResult walk = WalkDumpPaths(args.paths);
  report.skipped = std::move(walk.skipped);
  // Largest first, so one big file does not finish the phase alone.
  std::stable_sort(walk.files.begin(), walk.files.end(),
                   [](const FoundFile& a, const FoundFile& b) { return a.bytes > b.bytes; });
  std::vector<KeyedFile> read(walk.files.size());
  {
    ProgressMeter meter(stderr, "reading", static_cast<int64_t>(walk.files.size()), show_progress);
    ParallelFor(walk.files.size(), jobs, [&](size_t i) {
      read[i].modules = ReadModuleSources(walk.files[i], stage, args.max_file_bytes);
      for (const ModuleSource& source : read[i].modules.modules) read[i].keys.push_back(KeyModule(source, options));
      meter.Done(walk.files[i].path);
    });
  }

  // --- Plan: one job per new entry ---
  std::vector<CompileJob> planned;
  std::map<std::pair<std::string, hlo::Hash128>, const ModuleSource*> seen;
  for (KeyedFile& file : read) {
    for (SkippedPath& skip : file.modules.skipped) report.skipped.push_back(std::move(skip));
    for (size_t m = 0; m < file.modules.modules.size(); ++m) {
      const ModuleSource& source = file.modules.modules[m];
      ++report.found;
      if (!file.keys[m]) {
        report.failures.push_back(FailureOf(source, file.keys[m].error()));
        continue;
      }
      for (const KeyedOptions& keyed : *file.keys[m]) {
        ++report.entries;
        if (!seen.emplace(std::make_pair(keyed.options.chip, keyed.key), &source).second) {
          ++report.duplicates;
          continue;
        }
        planned.push_back({&source, keyed.options, keyed.key});
      }
    }
  }
  report.files = static_cast<int64_t>(walk.files.size());
  // Largest first: the long compiles start early and the workers finish together.
  std::stable_sort(planned.begin(), planned.end(),
                   [](const CompileJob& a, const CompileJob& b) { return a.source->text.size() > b.source->text.size(); });

  // --- Skip what is cached ---
  std::vector<Result<bool>> cached(planned.size(), false);
  ParallelFor(planned.size(), jobs, [&](size_t i) { cached[i] = target->Contains(planned[i]); });
  std::vector<CompileJob> to_make;
  for (size_t i = 0; i < planned.size(); ++i) {
    if (!cached[i]) {
      report.failures.push_back(FailureOf(*planned[i].source, cached[i].error()));
    } else if (*cached[i]) {
      ++report.cached;
    } else {
      to_make.push_back(planned[i]);
    }
  }
  if (args.dry_run) {
    report.dry_run = true;
    report.compiled = static_cast<int64_t>(to_make.size());
    for (const CompileJob& job : to_make) {
      report.would_compile.push_back(job.key.Hex() + "  " + job.options.chip + "  " + job.source->origin);
    }
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::nullopt;
  }

  // --- Compile ---
  std::vector<Result<JobOutcome>> made(to_make.size(), JobOutcome{});
  {
    ProgressMeter meter(stderr, "compiling", static_cast<int64_t>(to_make.size()), show_progress);
    ParallelFor(to_make.size(), jobs, [&](size_t i) {
      made[i] = target->Make(to_make[i]);
      meter.Done(to_make[i].source->origin);
    });
  }
  for (size_t i = 0; i < to_make.size(); ++i) {
    if (!made[i]) {
      report.failures.push_back(FailureOf(*to_make[i].source, made[i].error()));
      continue;
    }
    if (!made[i]->compiled) {
      ++report.cached;
      continue;
    }
    ++report.compiled;
    report.compile_seconds += made[i]->compile_seconds;
    report.executable_bytes += made[i]->bytes;
    if (made[i]->stored_bytes) report.stored_bytes = report.stored_bytes.value_or(0) + *made[i]->stored_bytes;
    report.tuned += made[i]->tuned;
    if (!made[i]->tune_note.empty()) {
      report.tune_notes.push_back(to_make[i].source->origin + " (" + to_make[i].options.chip + "): " + made[i]->tune_note);
    }
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return std::nullopt;
}

}  // namespace

void RegisterPrewarm(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("prewarm", "Fill the cache from XLA dump folders, saved graphs and HLO files");
  auto args = std::make_shared<PrewarmArgs>();
  cmd->add_option("paths", args->paths, "Files and folders to read (walked recursively)")->required();
  auto* db = cmd->add_option("--db", args->db, "Cache database to fill (default " + std::string(cache::kDefaultStorePath) + ") [KILN_DB]")->envname("KILN_DB");
  cmd->add_option("--server", args->server, "Pre-warm a running kiln serve instead, e.g. http://127.0.0.1:8470");
  cmd->add_option("--token", args->token, "Bearer token for --server [KILN_TOKEN]")->envname("KILN_TOKEN");
  cmd->add_option("--chip", args->chips, "Target chip; repeat for several (default v5e)")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  cmd->add_option("--plan", args->plan, "Fusion plan: none, heuristic or given")
      ->check(CLI::IsMember({"none", "heuristic", "given"}));
  cmd->add_option("--jobs", args->jobs, "Parallel workers (default: the number of cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--tune", args->tune, "Also autotune each new entry within this budget, e.g. 20s (--db only)");
  cmd->add_option("--topology", args->topology,
                  "Compile modules traced for this many devices as the per-chip programs of this slice, e.g. 2x4 "
                  "(default: each module for its own device count, on the most compact slice)");
  cmd->add_option("--stage", args->stage, "XLA dump stage to compile: before (default), after or all")
      ->check(CLI::IsMember({"before", "after", "all"}));
  cmd->add_flag("--dry-run", args->dry_run, "List what would be compiled; store nothing");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the summary table");
  cmd->add_option("--max-file-bytes", args->max_file_bytes,
                  "Skip files larger than this, on disk or decompressed (default 1 GiB)");
  cmd->add_option("--timeout", args->timeout,
                  "How long to wait for the server per request: 600s (default), 10m (a bare number is seconds)");
  cmd->callback([args, db, exit_code] {
    args->db_given = db->count() > 0;
    PrewarmReport report;
    if (std::optional<RunError> failed = RunPrewarm(*args, report)) {
      ReportFailure("prewarm", failed->error, args->json);
      *exit_code = failed->usage ? kUsageError : 1;
      return;
    }
    if (args->json) {
      std::printf("%s\n", PrewarmJson(report).dump().c_str());
    } else {
      std::printf("%s", PrewarmTable(report).c_str());
    }
    std::fflush(stdout);
    *exit_code = report.failures.empty() ? 0 : 1;
  });
}

}  // namespace kiln::tools
