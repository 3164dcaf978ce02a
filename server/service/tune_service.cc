#include "server/service/tune_service.h"


#include <algorithm>
#include <cstdint>

#include "cache/shared/server_identity.h"
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
      publish_(std::move(publish)),
      server_name_(cache::shared::ProcessName()) {  // host:pid until the server knows its port
  TuneJobs::Options jobs;
  jobs.workers = options_.workers;
  jobs.queue_capacity = options_.queue_capacity;
  jobs.clock = [this] { return store_.Now(); };
  jobs_ = std::make_unique<TuneJobs>(
      jobs, [this](const TuneJobSpec& spec, TuneProgress& progress, const std::function<bool()>& cancelled) {
        return Run(spec, progress, cancelled);
      });
  if (options_.shared != nullptr) {
    // Orphans are looked for a few times per lease: taken over within about
    // a lease and a third of its holder's death.
    const auto scan = std::max(options_.shared->options().lease_ttl / 3, std::chrono::milliseconds(250));
    fleet_ = std::make_unique<FleetTuning>(*options_.shared, server_name_, scan);
    fleet_->StartScan([this](const cache::shared::FleetTuneJob& orphan) { TakeOver(orphan); });
  }
}

TuneService::~TuneService() {
  // No takeover once stopping; jobs still going hand their leases over.
  if (fleet_) {
    fleet_->BeginShutdown();
    fleet_->StopScan();
  }
  jobs_.reset();
  fleet_.reset();
}

void TuneService::BeginShutdown() {
  if (fleet_) fleet_->BeginShutdown();
  jobs_->BeginShutdown();
}

void TuneService::set_server_name(std::string name) {
  if (fleet_) fleet_->set_server_name(name);
  std::lock_guard lock(name_mu_);
  server_name_ = std::move(name);
}

std::string TuneService::server_name() const {
  std::lock_guard lock(name_mu_);
  return server_name_;
}

TuneJobView TuneService::Here(TuneJobView view) const {
  view.server = server_name();
  return view;
}

std::optional<TuneJobView> TuneService::Find(const std::string& tenant, const std::string& id) const {
  if (std::optional<TuneJobView> job = jobs_->Find(tenant, id)) return Here(std::move(*job));
  if (!fleet_) return std::nullopt;
  // A job of this server's that took `id` over (still kept when done).
  for (TuneJobView& job : jobs_->List(tenant, SIZE_MAX)) {
    if (job.takes_over == id) return Here(std::move(job));
  }
  std::optional<TuneJobView> fleet_job = fleet_->Find(tenant, id);
  // The job that took `id` over may be this server's own.
  if (fleet_job && fleet_job->id != id) {
    if (std::optional<TuneJobView> job = jobs_->Find(tenant, fleet_job->id)) return Here(std::move(*job));
  }
  return fleet_job;
}

std::vector<TuneJobView> TuneService::List(const std::string& tenant, size_t limit) const {
  std::vector<TuneJobView> jobs = jobs_->List(tenant, limit);
  for (TuneJobView& job : jobs) job = Here(std::move(job));
  if (!fleet_) return jobs;
  for (TuneJobView& job : fleet_->List(tenant)) jobs.push_back(std::move(job));
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TuneJobView& a, const TuneJobView& b) { return a.created_ms > b.created_ms; });
  if (jobs.size() > limit) jobs.resize(limit);
  return jobs;
}

Result<TuneJobView> TuneService::Cancel(const std::string& tenant, const std::string& id) {
  Result<TuneJobView> cancelled = jobs_->Cancel(tenant, id);
  if (cancelled) return Here(std::move(*cancelled));
  if (cancelled.error().code == ErrorCode::kNotFound && fleet_) {
    if (std::optional<TuneJobView> elsewhere = fleet_->Find(tenant, id)) {
      return NotFoundError("tuning job " + id + " runs on server " + elsewhere->server + ", not here; cancel it there");
    }
  }
  return cancelled;
}

TuneCounts TuneService::counts() const {
  TuneCounts counts = jobs_->counts();
  if (fleet_) {
    counts.fleet_skipped = fleet_->skipped();
    counts.fleet_takeovers = fleet_->takeovers();
  }
  return counts;
}

Result<TuneJobs::Submitted> TuneService::Submit(TuneJobSpec spec) {
  if (fleet_) {
    // This server's job for the entry answers without asking the fleet.
    if (std::optional<TuneJobView> active = jobs_->Active(spec.entry.tenant, spec.entry.key);
        active && active->entry == spec.entry) {
      return TuneJobs::Submitted{.job = Here(std::move(*active)), .created = false};
    }
    spec.id = NewTuneJobId();
    FleetTuning::Decision decision = fleet_->Claim(spec, store_.Now());
    if (decision.elsewhere) return TuneJobs::Submitted{.job = std::move(*decision.elsewhere), .created = false};
    spec.hold = std::move(decision.hold);
  }
  KILN_ASSIGN_OR_RETURN(TuneJobs::Submitted submitted, jobs_->Submit(std::move(spec)));
  submitted.job = Here(std::move(submitted.job));
  return submitted;
}

Result<TuneJobs::Submitted> TuneService::Start(TuneStart start) {
  if (!start.hlo) {
    // A key alone names the entry's job, or starts one on the module text
    // the store keeps beside the entry.
    if (std::optional<TuneJobView> active = jobs_->Active(start.tenant, *start.key)) {
      return TuneJobs::Submitted{.job = Here(std::move(*active)), .created = false};
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
    return Submit(TuneJobSpec{.entry = id, .hlo = {}, .options = options, .budget = start.budget});
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
  return Submit(TuneJobSpec{.entry = id,
                            .hlo = *std::move(start.hlo),
                            .options = driver::NormalizedOptions(start.options),
                            .budget = start.budget});
}

void TuneService::QueueBackground(const cache::EntryId& id, const driver::CompileOptions& options) {
  autotune::TuneOptions budget;
  budget.max_seconds = options_.background_seconds;
  // No text in the queue: the job reads the entry's own from the store.
  TuneJobSpec spec{.entry = id, .hlo = {}, .options = options, .budget = budget, .background = true};
  // With a fleet, the lease is taken when the job starts: a compile thread
  // never waits on Redis.
  if (fleet_) {
    spec.id = NewTuneJobId();
    spec.hold = fleet_->ClaimAtStart(spec, store_.Now());
  }
  if (!jobs_->Submit(std::move(spec))) jobs_->Dropped();
}

void TuneService::TakeOver(const cache::shared::FleetTuneJob& orphan) {
  const cache::EntryId& id = orphan.record.entry;
  // A job of this server's tunes it already (it takes the lease itself).
  if (std::optional<TuneJobView> active = jobs_->Active(id.tenant, id.key); active && active->entry == id) return;
  Result<std::optional<cache::EntryMetadata>> stored = store_.GetMetadata(id);
  // Not stored here: a server that has the entry takes it over.
  if (!stored || !*stored || (*stored)->quarantined) return;
  // Tuned already (the job published before its server died, say): done.
  if ((*stored)->plan_kind == cache::PlanKind::kTuned) return fleet_->Prune(orphan);
  Result<std::optional<std::string>> source = store_.Source(id);
  const bool stored_text = source && *source;
  std::string text;
  Result<std::optional<cache::BundleEntry>> shared = options_.shared->Fetch(id);
  if (shared && *shared) {
    if ((*shared)->metadata.plan_kind == cache::PlanKind::kTuned) return fleet_->Prune(orphan);
    if (!stored_text) text = std::move((*shared)->source_text);
  }
  if (!stored_text && text.empty()) return;  // no module text here
  Result<driver::CompileOptions> options = OptionsOfEntry(**stored);
  if (!options) return;
  TuneJobSpec spec{.entry = id, .hlo = std::move(text), .options = *options, .background = orphan.record.background};
  spec.budget.max_trials = orphan.record.max_trials;
  spec.budget.max_seconds = orphan.record.max_seconds;
  spec.budget.seed = orphan.record.seed;
  spec.id = NewTuneJobId();
  spec.takes_over = orphan.record.job_id;
  std::shared_ptr<FleetHold> hold = fleet_->ClaimOrphan(spec, store_.Now());
  if (!hold) return;  // another server took it first
  spec.hold = hold;
  Result<TuneJobs::Submitted> submitted = jobs_->Submit(std::move(spec));
  if (!submitted || !submitted->created) {
    hold->HandOver();  // no room here now: listed still, for the next scan
    return;
  }
  fleet_->CountTakeover();
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
                      .fusion_gain_us = result.fusion_gain_us,
                      .body_gain_us = result.body_gain_us,
                      .schedule_gain_us = result.schedule_gain_us};
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
  if (publish_) publish_(SharedEntryOf(TunedPut(spec.entry.tenant, result, spec.options, spec.hlo.empty() ? stored_text : spec.hlo), store_.Now()));
  return outcome;
}

}  // namespace kiln::service
