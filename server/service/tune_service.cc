#include "server/service/tune_service.h"

#include "compiler/autotune/progress_runner.h"
#include "runtime/chip/chip_spec.h"
#include "server/service/compile_options.h"
#include "server/service/compiled_entry.h"
#include "server/service/module_reader.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"
#include "server/service/tune_records.h"
#include "server/service/tune_runner.h"
#include "server/service/tuned_entry.h"

namespace kiln::service {

TuneService::TuneService(cache::CacheStore& store, StoredEntries& entries, TuneGate& gate, TuneServiceOptions options,
                         std::function<void(const cache::EntryId&)> forget,
                         std::function<void(const cache::BundleEntry&)> publish)
    : store_(store),
      entries_(entries),
      gate_(gate),
      options_(options),
      forget_(std::move(forget)),
      publish_(std::move(publish)) {
  TuneJobs::Options jobs;
  jobs.workers = options_.workers;
  jobs.queue_capacity = options_.queue_capacity;
  jobs.clock = [this] { return store_.Now(); };
  jobs_ = std::make_unique<TuneJobs>(
      jobs, [this](const TuneJobSpec& spec, TuneProgress& progress, const std::function<bool()>& cancelled) {
        return Run(spec, progress, cancelled);
      });
}

TuneService::~TuneService() { jobs_.reset(); }

Result<TuneJobs::Submitted> TuneService::Start(TuneStart start) {
  if (!start.hlo) {
    // A key alone names the entry's job, or starts one on the module text
    // the store keeps beside the entry.
    if (std::optional<TuneJobView> active = jobs_->Active(start.tenant, *start.key)) {
      return TuneJobs::Submitted{.job = std::move(*active), .created = false};
    }
    KILN_ASSIGN_OR_RETURN(cache::EntryId id, entries_.Find(start.tenant, start.key->Hex()));
    Result<std::optional<std::string>> source = store_.Source(id);
    if (!source) return std::unexpected(InternalFailure("reading the entry's HLO text", source.error()));
    if (!*source) {
      return InvalidArgumentError("the store keeps no HLO text for key " + start.key->Hex() +
                                  " (an entry imported or fetched from the shared tier, or a module over 64 MiB): "
                                  "send the module's HLO text as 'hlo' to tune it")
          .WithReason(std::string(kHloRequired));
    }
    Result<std::optional<cache::EntryMetadata>> metadata = store_.GetMetadata(id);
    if (!metadata || !*metadata) return NotFoundError("no executable with key " + id.key.Hex());
    KILN_ASSIGN_OR_RETURN(driver::CompileOptions options, OptionsOfEntry(**metadata));
    // The text is read again from the store when the job starts.
    return jobs_->Submit(TuneJobSpec{.entry = id, .hlo = {}, .options = options, .budget = start.budget});
  }
  // The topology a compile resolves, so the job tunes the entry's program.
  KILN_ASSIGN_OR_RETURN(ModuleRead read, ReadModule(*start.hlo, start.options));
  KILN_RETURN_IF_ERROR(CheckCompilable(*read.module));
  const hlo::Hash128& key = read.fingerprint.key;
  if (start.key && *start.key != key) {
    return InvalidArgumentError("'key' " + start.key->Hex() + " is not the key of the module sent (" + key.Hex() +
                                " on " + start.options.chip + ")")
        .WithReason(std::string(kKeyMismatch));
  }
  cache::EntryId id{start.tenant, key, start.options.chip, kCompilerFormatVersion};
  Result<std::optional<cache::EntryMetadata>> stored = store_.GetMetadata(id);
  if (!stored) return std::unexpected(InternalFailure("cache lookup", stored.error()));
  if (!*stored || (*stored)->quarantined) {
    return NotFoundError("no executable with key " + id.key.Hex() + " on " + id.chip + " for tenant " +
                         start.tenant + " to tune; compile the module first (POST /v1/compile)");
  }
  return jobs_->Submit(TuneJobSpec{.entry = id,
                                   .hlo = *std::move(start.hlo),
                                   .options = driver::NormalizedOptions(start.options),
                                   .budget = start.budget});
}

void TuneService::QueueBackground(const cache::EntryId& id, const driver::CompileOptions& options) {
  autotune::TuneOptions budget;
  budget.max_seconds = options_.background_seconds;
  // No text in the queue: the job reads the entry's own from the store.
  TuneJobSpec spec{.entry = id, .hlo = {}, .options = options, .budget = budget, .background = true};
  if (!jobs_->Submit(std::move(spec))) jobs_->Dropped();
}

Result<TuneOutcome> TuneService::Run(const TuneJobSpec& spec, TuneProgress& progress,
                                     const std::function<bool()>& cancelled) {
  // The swap replaces exactly the bytes stored now, or nothing.
  KILN_ASSIGN_OR_RETURN(std::optional<cache::EntryMetadata> stored, store_.GetMetadata(spec.entry));
  if (!stored || stored->quarantined) {
    return NotFoundError("entry " + spec.entry.key.Hex() + " is no longer stored; nothing to tune");
  }
  std::string stored_text;
  if (spec.hlo.empty()) {
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> text, store_.Source(spec.entry));
    if (!text) {
      return FailedPreconditionError("the store keeps no HLO text for entry " + spec.entry.key.Hex() +
                                     "; send the module as 'hlo' to tune it");
    }
    stored_text = std::move(*text);
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                        ParseVerified(spec.hlo.empty() ? stored_text : spec.hlo));
  const runtime::ChipSpec* chip = runtime::FindChip(spec.entry.chip);
  if (chip == nullptr) return InvalidArgumentError("unknown chip '" + spec.entry.chip + "'");

  SimulatedRunner simulator(*chip);
  if (spec.budget.max_seconds > 0) simulator.set_evaluation_limit(spec.budget.max_seconds / 3);
  // Before each kernel is timed or evaluated: stop when cancelled (so a
  // long output check ends within a kernel), and give way to executes.
  simulator.set_before_kernel([this, &cancelled, &progress]() -> Status {
    if (cancelled()) return CancelledError("tuning cancelled");
    return gate_.WaitForNoRuns(cancelled, &progress.waiting_for_runs);
  });
  autotune::ProgressRunner runner(simulator, progress);
  StoreRecords records(store_, spec.entry.tenant);
  autotune::TuneOptions budget = spec.budget;
  budget.cancelled = cancelled;
  KILN_ASSIGN_OR_RETURN(autotune::TuneResult result, autotune::Tune(*module, spec.options, runner, &records, budget));
  if (result.fingerprint.key != spec.entry.key) {
    return FailedPreconditionError("the module's heuristic compile has key " + result.key + ", not the entry's " +
                                   spec.entry.key.Hex());
  }
  TuneOutcome outcome{.trials = result.trials,
                      .heuristic_us = result.heuristic_us,
                      .tuned_us = result.tuned_us,
                      .accepted = result.accepted,
                      .decision = result.decision,
                      .verification = result.accepted ? result.verification : "",
                      .verified_kernels = result.verified_kernels,
                      .tiling_gain_us = result.tiling_gain_us,
                      .fusion_gain_us = result.fusion_gain_us};
  if (!result.accepted) return outcome;
  if (cancelled()) return CancelledError("cancelled after " + std::to_string(result.trials) + " trials, before the swap");
  Status swapped = StoreTunedEntry(store_, spec.entry.tenant, result, spec.options, stored->checksum);
  if (!swapped) {
    const std::string_view reason = swapped.error().reason();
    if (reason != cache::kAlreadyTuned && reason != cache::kEntryChanged && swapped.error().code != ErrorCode::kNotFound) {
      return std::unexpected(swapped.error().WithContext("storing the tuned executable"));
    }
    outcome.decision += "; not stored: " + swapped.error().message;
    return outcome;
  }
  // The next compile, fetch or run of the key gets the tuned bytes: the
  // store's hot set has them; the index and loaded programs are dropped.
  forget_(spec.entry);
  outcome.stored = true;
  // Other servers fetching the key from the shared tier get the tuned bytes.
  if (publish_) publish_(SharedEntryOf(TunedPut(spec.entry.tenant, result, spec.options), store_.Now()));
  return outcome;
}

}  // namespace kiln::service
