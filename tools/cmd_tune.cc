// kiln tune FILE [--chip C] [--budget 30s | --trials N] [--seed S] [--db DB] [--json]
// Autotunes one HLO text file (compiler/autotune/tuner.h) on a simulated
// chip: prints the tuned plan's kernels next to the heuristic's and one
// summary line (or one JSON object). With --db, the tuned executable
// replaces the heuristic one under its key (plan tuned) and every trial is
// kept as a tuning record, from which later tunings of modules sharing a
// kernel start ("transfer").
#include <cstdio>
#include <memory>
#include <string>

#include "cache/cache_store.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/printer.h"
#include "runtime/chip/chip_spec.h"
#include "server/service/tenants.h"
#include "server/service/tune_records.h"
#include "server/service/tune_runner.h"
#include "tools/commands.h"
#include "tools/json_error.h"
#include "tools/load_module.h"
#include "tools/module_refinement.h"
#include "tools/tune_progress.h"
#include "tools/tune_report.h"
#include "tools/tune_store.h"

namespace kiln::tools {
namespace {

struct TuneArgs {
  std::string file;
  std::string arg_shapes;  // --arg-shapes: refines dynamic dimensions
  std::string chip = kDefaultChip;
  std::string budget;
  int64_t trials = 0;
  bool trials_given = false;
  uint64_t seed = 1;
  std::string db;
  bool json = false;
};

constexpr const char* kDefaultBudget = "30s";

Result<autotune::TuneOptions> TuneOptionsFrom(const TuneArgs& args) {
  autotune::TuneOptions options;
  options.seed = args.seed;
  if (args.trials_given) {
    if (args.trials <= 0) {
      return InvalidArgumentError("--trials must be at least 1, got " + std::to_string(args.trials));
    }
    options.max_trials = args.trials;
  } else {
    return TuneOptionsForBudget(args.budget.empty() ? kDefaultBudget : args.budget, args.seed);
  }
  KILN_RETURN_IF_ERROR(autotune::CheckBudget(options));
  return options;
}

Status RunTune(const TuneArgs& args) {
  KILN_ASSIGN_OR_RETURN(autotune::TuneOptions tune, TuneOptionsFrom(args));
  const runtime::ChipSpec* chip = runtime::FindChip(args.chip);
  if (chip == nullptr) return InvalidArgumentError("unknown chip '" + args.chip + "' (known: " + runtime::ChipNamesText() + ")");
  KILN_ASSIGN_OR_RETURN(auto module, LoadVerifiedModule(args.file));
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Shape> arg_shapes, ParseArgShapes(args.arg_shapes));
  KILN_ASSIGN_OR_RETURN(DimensionArguments unused_dims, PrepareForCompile(*module, args.file, arg_shapes));
  (void)unused_dims;  // no random inputs here
  driver::CompileOptions options;
  options.chip = args.chip;
  // The topology a compile of it resolves (the slice of its own devices).
  Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(*module, options);
  if (!resolved) return resolved.error().WithContext(args.file);

  std::unique_ptr<cache::CacheStore> store;
  std::unique_ptr<service::StoreRecords> records;
  if (!args.db.empty()) {
    cache::CacheStoreOptions store_options;
    store_options.path = args.db;
    store_options.dictionary_training_puts = 0;
    Result<std::unique_ptr<cache::CacheStore>> opened = cache::CacheStore::Open(std::move(store_options));
    if (!opened) return opened.error().WithContext("--db " + args.db);
    store = *std::move(opened);
    records = std::make_unique<service::StoreRecords>(*store, std::string(service::kDefaultTenant));
  }

  // The text kept beside a stored entry, printed before tuning changes the
  // module (a refined module's text is its own, of the same key).
  const std::string source_text = store ? hlo::PrintModule(*module) : std::string();
  service::SimulatedRunner runner(*chip);
  // An output check longer than a third of a time budget leaves too little
  // to search fusion with (the tuner then searches tiles only).
  if (tune.max_seconds > 0) runner.set_evaluation_limit(tune.max_seconds / 3);
  // The search is long: its progress on stderr (not with --json).
  autotune::Progress progress;
  autotune::ProgressRunner counted(runner, progress);
  TuneProgressLine line(stderr, progress, tune.max_trials, tune.max_seconds, !args.json);
  Result<autotune::TuneResult> result = autotune::Tune(*module, options, counted, records.get(), tune);
  line.Finish();
  if (!result) return result.error().WithContext(args.file);

  StoreOutcome outcome;
  if (store) outcome = StoreTuneResult(*store, *result, driver::NormalizedOptions(options), records->added(),
                                        source_text);
  if (args.json) {
    std::printf("%s\n", TuneJson(*result, outcome).dump().c_str());
  } else {
    std::printf("%s", TuneTable(*result, outcome).c_str());
  }
  if (outcome.requested && result->accepted && !outcome.stored && !outcome.already_tuned) {
    return Error::Coded(ErrorCode::kUnavailable, outcome.note);
  }
  return Ok();
}

}  // namespace

void RegisterTune(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("tune", "Autotune the fusion and tiling of an HLO text file on a simulated chip");
  auto args = std::make_shared<TuneArgs>();
  cmd->add_option("file", args->file, "HLO text, StableHLO text or MLIR bytecode file")->required();
  cmd->add_option("--arg-shapes", args->arg_shapes,
                  "Concrete shapes of the entry's parameters (\"s64[],f32[3,4]\"), refining dynamic dimensions");
  cmd->add_option("--chip", args->chip, "Target chip (" + runtime::ChipNamesText() + ")")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  auto* budget = cmd->add_option("--budget", args->budget,
                                 "Time to spend, e.g. 30s, 500ms, 2m (default 30s; at most 24h)");
  auto* trials = cmd->add_option("--trials", args->trials,
                                 "Programs to measure instead of a time budget (reproducible with --seed)");
  budget->excludes(trials);
  cmd->add_option("--seed", args->seed, "Seed of the search (default 1)");
  cmd->add_option("--db", args->db, "Store the tuned executable and the tuning records in this SQLite file");
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([args, trials, exit_code] {
    args->trials_given = trials->count() > 0;
    if (Status s = RunTune(*args); !s) {
      ReportFailure("tune", s.error(), args->json);
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
