// POST and GET /v1/tune, GET and DELETE /v1/tune/{id}: autotuning jobs over the
// store's entries (tune_jobs.h), and the job's work: the tuner on the timing
// simulator, yielding to the pool's runs (tune_gate.h), with records in the
// store and the tuned executable swapped in under the entry's key.
#include <chrono>
#include <charconv>
#include <nlohmann/json.hpp>

#include "compiler/driver/module_topology.h"
#include "compiler/autotune/progress_runner.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/chip/chip_spec.h"
#include "server/compile_request.h"
#include "server/entry_json.h"
#include "server/http/json_response.h"
#include "server/kiln_service.h"
#include "server/service_errors.h"
#include "server/tune_records.h"
#include "server/tune_request.h"
#include "server/tune_runner.h"
#include "server/tuned_entry.h"

namespace kiln::server {
namespace {

using nlohmann::json;

json OptionalNumber(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json JobToJson(const TuneJobView& job) {
  json body = {
      {"id", job.id},
      {"key", job.entry.key.Hex()},
      {"chip", job.entry.chip},
      {"state", TuneStateName(job.state)},
      {"background", job.background},
      {"trials_done", job.trials},
      {"max_trials", job.max_trials > 0 ? json(job.max_trials) : json(nullptr)},
      {"time_budget_s", job.time_budget_s > 0 ? json(job.time_budget_s) : json(nullptr)},
      {"seed", job.seed},
      {"heuristic_us", OptionalNumber(job.heuristic_us)},
      {"best_us", OptionalNumber(job.best_us)},
      {"tuned_us", job.outcome && job.outcome->stored ? json(job.outcome->tuned_us) : json(nullptr)},
      {"accepted", job.outcome ? json(job.outcome->accepted) : json(nullptr)},
      {"stored", job.outcome ? job.outcome->stored : false},
      {"decision", job.outcome ? json(job.outcome->decision) : json(nullptr)},
      {"error", job.error ? json(*job.error) : json(nullptr)},
      {"waiting_for_executes", job.waiting_for_runs},
      {"cancel_requested", job.cancel_requested},
      {"created", Rfc3339(job.created_ms)},
      {"finished", job.finished_ms ? json(Rfc3339(*job.finished_ms)) : json(nullptr)},
  };
  return body;
}

http::Response JobResponse(int status, const TuneJobView& job) {
  http::Response response = http::JsonResponse(status, JobToJson(job));
  response.headers.Set("Location", "/v1/tune/" + job.id);
  return response;
}

Result<hlo::Fingerprint> ParseAndFingerprint(const std::string& text, driver::CompileOptions& options) {
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(text, "<hlo>");
  if (!module) return std::unexpected(module.error().WithReason("hlo_parse_error"));
  if (Status verified = hlo::VerifyModule(**module); !verified) {
    return std::unexpected(verified.error().WithReason("hlo_verify_error"));
  }
  // The topology a compile resolves, so the job tunes the entry's program.
  Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(**module, options);
  if (!resolved) return std::unexpected(resolved.error());
  Result<hlo::Fingerprint> fingerprint = hlo::FingerprintModule(**module, driver::FingerprintOptionsFor(options));
  if (!fingerprint) return std::unexpected(fingerprint.error().WithReason("hlo_verify_error"));
  return fingerprint;
}

// The {id} of the path: 16 lowercase hex digits, else 400 invalid_job_id.
Result<std::string> JobIdOf(const http::Request& request) {
  const std::string id(request.PathParam("id").value_or(""));
  bool valid = id.size() == 16;
  for (char c : id) valid = valid && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!valid) {
    return InvalidArgumentError("job id '" + id.substr(0, 64) + "': expected 16 lowercase hex digits")
        .WithReason("invalid_job_id");
  }
  return id;
}

// The options a stored entry was compiled with (its notes), to tune it
// again; only heuristic entries (or tuned ones, which were heuristic) tune.
Result<driver::CompileOptions> OptionsOfEntry(const cache::EntryMetadata& metadata) {
  driver::CompileOptions options;
  KILN_RETURN_IF_ERROR(SetChip(options, metadata.id.chip));
  const EntryNotes notes = ParseEntryNotes(metadata.options);
  KILN_RETURN_IF_ERROR(ApplyJsonOptions(options, notes.options));
  if (metadata.plan_kind != cache::PlanKind::kTuned && options.plan != fusion::PlanKind::kHeuristic) {
    return InvalidArgumentError("entry " + metadata.id.key.Hex() + " was compiled with plan " +
                                std::string(fusion::PlanKindName(options.plan)) +
                                "; tuning starts from the heuristic plan")
        .WithReason("invalid_options");
  }
  options.plan = fusion::PlanKind::kHeuristic;
  return driver::NormalizedOptions(options);
}

}  // namespace

void KilnService::StartTune(Call call) {
  Result<TuneRequest> parsed = ParseTuneRequest(call.request.body);
  if (!parsed) return call.respond(http::ErrorResponse(parsed.error()));
  TuneRequest& request = *parsed;
  if (!request.hlo) {
    // A key alone names the entry's job, or starts one on the module text
    // the store keeps beside the entry.
    if (std::optional<TuneJobView> active = tune_jobs_->Active(call.tenant, *request.key)) {
      return call.respond(JobResponse(200, *active));
    }
    Result<cache::EntryId> id = FindEntry(call.tenant, request.key->Hex());
    if (!id) return call.respond(http::ErrorResponse(id.error()));
    Result<std::optional<std::string>> source = store_->Source(*id);
    if (!source) return call.respond(http::ErrorResponse(InternalFailure("reading the entry's HLO text", source.error())));
    if (!*source) {
      return call.respond(http::ErrorResponse(
          InvalidArgumentError("the store keeps no HLO text for key " + request.key->Hex() +
                               " (an entry imported or fetched from the shared tier, or a module over 64 MiB): "
                               "send the module's HLO text as 'hlo' to tune it")
              .WithReason("hlo_required")));
    }
    Result<std::optional<cache::EntryMetadata>> metadata = store_->GetMetadata(*id);
    if (!metadata || !*metadata) {
      return call.respond(http::ErrorResponse(NotFoundError("no executable with key " + id->key.Hex())));
    }
    Result<driver::CompileOptions> options = OptionsOfEntry(**metadata);
    if (!options) return call.respond(http::ErrorResponse(options.error()));
    // The text is read again from the store when the job starts.
    TuneJobSpec spec{.entry = *id, .hlo = {}, .options = *options, .budget = request.budget};
    Result<TuneJobs::Submitted> submitted = tune_jobs_->Submit(std::move(spec));
    if (!submitted) return call.respond(http::ErrorResponse(submitted.error()));
    return call.respond(JobResponse(submitted->created ? 202 : 200, submitted->job));
  }
  Result<hlo::Fingerprint> fingerprint = ParseAndFingerprint(*request.hlo, request.options);
  if (!fingerprint) return call.respond(http::ErrorResponse(fingerprint.error()));
  if (request.key && *request.key != fingerprint->key) {
    return call.respond(http::ErrorResponse(
        InvalidArgumentError("'key' " + request.key->Hex() + " is not the key of the module sent (" +
                             fingerprint->key.Hex() + " on " + request.options.chip + ")")
            .WithReason("key_mismatch")));
  }
  cache::EntryId id{call.tenant, fingerprint->key, request.options.chip, kCompilerFormatVersion};
  Result<std::optional<cache::EntryMetadata>> stored = store_->GetMetadata(id);
  if (!stored) return call.respond(http::ErrorResponse(InternalFailure("cache lookup", stored.error())));
  if (!*stored || (*stored)->quarantined) {
    return call.respond(http::ErrorResponse(
        NotFoundError("no executable with key " + id.key.Hex() + " on " + id.chip + " for tenant " + call.tenant +
                      " to tune; compile the module first (POST /v1/compile)")));
  }
  TuneJobSpec spec{.entry = id,
                   .hlo = *std::move(request.hlo),
                   .options = driver::NormalizedOptions(request.options),
                   .budget = request.budget};
  Result<TuneJobs::Submitted> submitted = tune_jobs_->Submit(std::move(spec));
  if (!submitted) return call.respond(http::ErrorResponse(submitted.error()));
  call.respond(JobResponse(submitted->created ? 202 : 200, submitted->job));
}

void KilnService::GetTune(Call call) {
  Result<std::string> id = JobIdOf(call.request);
  if (!id) return call.respond(http::ErrorResponse(id.error()));
  std::optional<TuneJobView> job = tune_jobs_->Find(call.tenant, *id);
  if (!job) {
    return call.respond(http::ErrorResponse(NotFoundError("no tuning job " + *id + " for tenant " + call.tenant)));
  }
  call.respond(JobResponse(200, *job));
}

void KilnService::ListTunes(Call call) {
  size_t limit = 100;
  if (auto value = call.request.Query("limit")) {
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), limit);
    if (ec != std::errc() || end != value->data() + value->size() || limit < 1 || limit > 1000) {
      return call.respond(http::ErrorResponse(
          InvalidArgumentError("query parameter limit: expected an integer in [1, 1000], got '" + std::string(*value) +
                               "'")
              .WithReason("bad_request")));
    }
  }
  json jobs = json::array();
  for (const TuneJobView& job : tune_jobs_->List(call.tenant, limit)) jobs.push_back(JobToJson(job));
  call.respond(http::JsonResponse(200, json{{"jobs", std::move(jobs)}}));
}

void KilnService::CancelTune(Call call) {
  Result<std::string> id = JobIdOf(call.request);
  if (!id) return call.respond(http::ErrorResponse(id.error()));
  Result<TuneJobView> job = tune_jobs_->Cancel(call.tenant, *id);
  if (!job) return call.respond(http::ErrorResponse(job.error()));
  // A running job stops after its current trial: 202, poll for "cancelled".
  call.respond(JobResponse(job->state == TuneState::kCancelled ? 200 : 202, *job));
}

void KilnService::QueueBackgroundTune(const cache::EntryId& id, const driver::CompileOptions& options) {
  autotune::TuneOptions budget;
  budget.max_seconds = options_.tune_in_background_s;
  // No text in the queue: the job reads the entry's own from the store.
  TuneJobSpec spec{.entry = id, .hlo = {}, .options = options, .budget = budget, .background = true};
  if (!tune_jobs_->Submit(std::move(spec))) tune_jobs_->Dropped();
}

Result<TuneOutcome> KilnService::RunTuneJob(const TuneJobSpec& spec, TuneProgress& progress,
                                            const std::function<bool()>& cancelled) {
  // The swap replaces exactly the bytes stored now, or nothing.
  KILN_ASSIGN_OR_RETURN(std::optional<cache::EntryMetadata> stored, store_->GetMetadata(spec.entry));
  if (!stored || stored->quarantined) {
    return NotFoundError("entry " + spec.entry.key.Hex() + " is no longer stored; nothing to tune");
  }
  std::string stored_text;
  if (spec.hlo.empty()) {
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> text, store_->Source(spec.entry));
    if (!text) {
      return FailedPreconditionError("the store keeps no HLO text for entry " + spec.entry.key.Hex() +
                                     "; send the module as 'hlo' to tune it");
    }
    stored_text = std::move(*text);
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                        hlo::ParseModule(spec.hlo.empty() ? stored_text : spec.hlo, "<hlo>"));
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module));
  const runtime::ChipSpec* chip = runtime::FindChip(spec.entry.chip);
  if (chip == nullptr) return InvalidArgumentError("unknown chip '" + spec.entry.chip + "'");

  SimulatedRunner simulator(*chip);
  if (spec.budget.max_seconds > 0) simulator.set_evaluation_limit(spec.budget.max_seconds / 3);
  // Before each kernel is timed or evaluated: stop when cancelled (so a
  // long output check ends within a kernel), and give way to executes.
  simulator.set_before_kernel([this, &cancelled, &progress]() -> Status {
    if (cancelled()) return CancelledError("tuning cancelled");
    return tune_gate_.WaitForNoRuns(cancelled, &progress.waiting_for_runs);
  });
  autotune::ProgressRunner runner(simulator, progress);
  StoreRecords records(*store_, spec.entry.tenant);
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
                      .decision = result.decision};
  if (!result.accepted) return outcome;
  if (cancelled()) return CancelledError("cancelled after " + std::to_string(result.trials) + " trials, before the swap");
  Status swapped = StoreTunedEntry(*store_, spec.entry.tenant, result, spec.options, stored->checksum);
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
  index_.Forget(spec.entry);
  programs_.Erase(spec.entry);
  outcome.stored = true;
  // Other servers fetching the key from the shared tier get the tuned bytes.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  PublishToShared(SharedEntryOf(TunedPut(spec.entry.tenant, result, spec.options), now_ms));
  return outcome;
}

}  // namespace kiln::server
