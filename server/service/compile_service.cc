#include "server/service/compile_service.h"

#include <algorithm>

#include "base/clock.h"
#include "compiler/driver/compile_module.h"
#include "compiler/hlo/printer.h"
#include "server/service/compile_failure.h"
#include "server/service/compiled_entry.h"
#include "server/service/module_reader.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::service {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

CompileService::CompileService(cache::CacheStore& store, StoredEntries& entries, ServiceMetrics& metrics,
                               WorkerPool& compile_threads, CompileServiceOptions options)
    : store_(store),
      entries_(entries),
      metrics_(metrics),
      compile_threads_(compile_threads),
      options_(std::move(options)) {
  if (options_.shared != nullptr) {
    // Mostly waiting on Redis: more threads than compile threads, so waits
    // on other servers' compiles do not queue behind each other.
    shared_threads_ = std::make_unique<WorkerPool>(std::max(1, options_.shared_threads), options_.compile_queue_capacity);
    lease_waiter_ = std::make_unique<cache::shared::LeaseWaiter>(*options_.shared);
  }
}

CompileService::~CompileService() { Shutdown(); }

void CompileService::Shutdown() {
  std::unique_ptr<cache::shared::LeaseWaiter> waiter;
  {
    std::lock_guard lock(waiter_mu_);
    stopping_ = true;
    waiter = std::move(lease_waiter_);
  }
  waiter.reset();           // its open waits end (cancelled) on the shared threads
  shared_threads_.reset();  // they hand compiles on to the compile threads
}

void CompileService::OnFleetChange(const cache::EntryId& id) {
  std::lock_guard lock(waiter_mu_);
  if (lease_waiter_ != nullptr) lease_waiter_->Nudge(id);
}

size_t CompileService::lease_waiting() const {
  std::lock_guard lock(waiter_mu_);
  return lease_waiter_ ? lease_waiter_->waiting() : 0;
}

void CompileService::Refused() {
  metrics_.CompileRequested();
  metrics_.CompileFailed();
}

std::optional<CompileAnswer> CompileService::AnswerFromMemory(const std::string& tenant,
                                                              const hlo::Hash128& request_hash,
                                                              const std::string& chip,
                                                              const CompileTimings& timings) {
  std::optional<hlo::Hash128> key = request_keys_.Find(request_hash);
  if (!key) return std::nullopt;
  std::optional<StoredEntries::Hot> hot = entries_.FindHot(tenant, *key, /*count_hit=*/true, chip);
  if (!hot) return std::nullopt;
  CompileAnswer answer{.entry = hot->entry->view, .outcome = CacheOutcome::kHit, .fast_path = true,
                       .timings = timings};
  answer.entry.executable = std::move(hot->executable);
  answer.timings.lookup_ms = MsSince(timings.start);
  if (on_hit_) on_hit_(answer.entry);
  metrics_.CompileRequested();
  metrics_.CompileAnswered(CacheOutcome::kHit, /*fast_path=*/true, answer.entry.entry_compile_ms);
  return answer;
}

void CompileService::Compile(CompileCall call, CompileDone done) {
  metrics_.CompileRequested();
  auto fail = [&](const Error& error) {
    metrics_.CompileFailed();
    done(std::unexpected(error));
  };
  auto hit = [&](EntryView entry, bool fast_path) {
    metrics_.CompileAnswered(CacheOutcome::kHit, fast_path, entry.entry_compile_ms);
    if (on_hit_) on_hit_(entry);
    done(CompileAnswer{.entry = std::move(entry), .outcome = CacheOutcome::kHit, .fast_path = fast_path,
                       .timings = call.timings});
  };
  cache::EntryId id{.tenant = call.tenant, .key = {}, .chip = call.options.chip};

  // A body seen before names its key without parsing.
  auto lookup_start = Clock::now();
  std::optional<hlo::Hash128> known = request_keys_.Find(call.request_hash);
  if (!known) {
    auto stored = store_.LookupRequest(call.tenant, call.request_hash, id.chip, id.format_version);
    if (stored && *stored) known = **stored;
  }
  if (known) {
    id.key = *known;
    Result<std::optional<EntryView>> found = entries_.LookUp(id);
    if (!found) return fail(found.error());
    if (*found) {
      call.timings.lookup_ms = MsSince(lookup_start);
      request_keys_.Remember(call.request_hash, id.key);
      return hit(std::move(**found), /*fast_path=*/true);
    }
  }
  call.timings.lookup_ms = MsSince(lookup_start);

  Result<ModuleRead> read = ReadModule(call.hlo, call.options, "<hlo>", call.argument_shapes);
  if (!read) return fail(read.error());
  if (Status compilable = CheckCompilable(*read->module); !compilable) return fail(compilable.error());
  // A module refined from argument shapes keeps the text it was compiled
  // from (its HLO, of the same key), so explain and tuning read it whole.
  if (!call.argument_shapes.empty()) call.hlo = hlo::PrintModule(*read->module);
  call.timings.parse_ms = read->parse_ms;
  call.timings.fingerprint_ms = read->fingerprint_ms;
  id.key = read->fingerprint.key;

  lookup_start = Clock::now();
  Result<std::optional<EntryView>> found = entries_.LookUp(id);
  if (!found) return fail(found.error());
  call.timings.lookup_ms += MsSince(lookup_start);
  request_keys_.Remember(call.request_hash, id.key);
  if (*found) return hit(std::move(**found), /*fast_path=*/false);
  JoinFlight(std::move(call), std::shared_ptr<hlo::Module>(std::move(read->module)), std::move(id), std::move(done));
}

void CompileService::JoinFlight(CompileCall call, std::shared_ptr<hlo::Module> module, cache::EntryId id,
                                CompileDone done) {
  // The first request for the key compiles, the others wait on it.
  const std::string flight_key = id.ToString();
  const Clock::time_point joined_at = Clock::now();
  auto answer = [this, done = std::move(done), timings = call.timings, joined_at](
                    const Flight& flight, SingleFlight<Flight>::Role role) mutable {
    if (flight->error) {
      metrics_.CompileFailed();
      return done(std::unexpected(*flight->error));
    }
    const bool leader = role == SingleFlight<Flight>::Role::kLeader;
    const CacheOutcome outcome = !leader || flight->shared_waited ? CacheOutcome::kJoined
                                 : flight->compiled               ? CacheOutcome::kMiss
                                                                  : CacheOutcome::kHit;
    double compile_ms = 0;
    if (outcome == CacheOutcome::kMiss) {
      compile_ms = flight->compile_ms;
      timings.store_ms = flight->store_ms;
    } else if (outcome == CacheOutcome::kJoined) {
      compile_ms = MsSince(joined_at);
    }
    timings.compile_ms = compile_ms;
    metrics_.CompileAnswered(outcome, /*fast_path=*/false, flight->entry.entry_compile_ms);
    done(CompileAnswer{.entry = flight->entry,
                       .outcome = outcome,
                       .fast_path = false,
                       .compile_ms = compile_ms,
                       .timings = timings,
                       .not_stored = flight->not_stored,
                       .from_shared = flight->from_shared});
  };
  std::function<bool()> gone = call.gone;
  if (flights_.Join(flight_key, std::move(answer), std::move(gone)) == SingleFlight<Flight>::Role::kLeader) {
    StartCompile(flight_key, std::move(module), std::move(call), std::move(id));
  }
}

void CompileService::StartCompile(const std::string& flight_key, std::shared_ptr<hlo::Module> module,
                                  CompileCall call, cache::EntryId id) {
  auto request = std::make_shared<const CompileCall>(std::move(call));
  // `lease`: the shared tier's compile lease, held until the entry is
  // published (null without a shared tier, or when it failed).
  auto compile = [this, flight_key, module, request, id](std::shared_ptr<cache::shared::SharedTier::Lease> lease) {
    std::optional<cache::BundleEntry> to_publish;
    Flight flight = CompileAndStore(*module, *request, id, &to_publish);
    // The compile's log record is written before the answer (in
    // StoreCompile), so a trainer that asks /v1/recompiles or /metrics next
    // sees its compile. The trainer is answered before the entry is
    // published to the shared tier, while the lease is still held, so
    // servers waiting on it find the entry.
    flights_.Finish(flight_key, flight);
    if (to_publish) Publish(*to_publish);
    if (flight->error) PublishFailure(id, *flight->error);
    lease.reset();  // published (or failed): others may look now
    const bool stored = !flight->error && flight->compiled && !flight->not_stored;
    if (on_stored_ && stored && request->options.plan == fusion::PlanKind::kHeuristic) {
      on_stored_(id, driver::NormalizedOptions(request->options));
    }
  };
  if (options_.shared == nullptr) {
    WorkerPool::Task task = [compile = std::move(compile)]() mutable { compile(nullptr); };
    if (!compile_threads_.TrySubmit(task)) RefuseCompile(flight_key);
    return;
  }
  // With a shared tier, the look into Redis runs on the shared threads and
  // any wait on another server's compile on the lease waiter, so waiting
  // holds no thread; only a real compile goes on to a compile thread.
  WorkerPool::Task claim = [this, flight_key, id, compile = std::move(compile)]() mutable {
    OnSharedClaim(flight_key, id, options_.shared->TryClaim(id), std::move(compile));
  };
  if (!shared_threads_->TrySubmit(claim)) RefuseCompile(flight_key);
}

void CompileService::RefuseCompile(const std::string& flight_key) {
  auto refused = std::make_shared<FlightOutcome>();
  refused->error =
      UnavailableError("every compile thread is busy and " + std::to_string(options_.compile_queue_capacity) +
                       " compiles are waiting; retry later")
          .WithReason(std::string(kOverloaded))
          .RetryAfter(1);
  flights_.Finish(flight_key, refused);
}

CompileService::Flight CompileService::CompileAndStore(hlo::Module& module, const CompileCall& call,
                                                       const cache::EntryId& id,
                                                       std::optional<cache::BundleEntry>* to_publish) {
  auto outcome = std::make_shared<FlightOutcome>();
  // Another flight may have stored the key between this request's lookup
  // and its flight.
  Result<std::optional<EntryView>> existing = entries_.LookUp(id);
  if (existing && *existing) {
    outcome->entry = std::move(**existing);
    return outcome;
  }
  // Read before the compile's passes change the module.
  cache::CompileRecord record = CompileRecordOf(module, id, call.client, call.options);
  Result<driver::CompileOutput> compiled = driver::CompileModule(module, call.options);
  if (!compiled) {
    outcome->error = CompileFailure(compiled.error());
    return outcome;
  }
  metrics_.Compiled(compiled->compile_ms);
  cache::BundleEntry shared_copy;
  StoredCompile stored = StoreCompile(store_, id, *compiled, call.options, call.hlo, call.request_hash,
                                      std::move(record), options_.shared != nullptr ? &shared_copy : nullptr);
  if (!stored.stored) {
    const cache::StorageProblem problem = cache::StorageProblemOf(stored.stored.error());
    if (problem == cache::StorageProblem::kNone) {
      outcome->error = InternalFailure("storing the executable", stored.stored.error());
      return outcome;
    }
    // A full disk or a read-only store: the compile is still answered,
    // with the executable, saying it was not stored and why.
    metrics_.NotStored(problem);
    outcome->not_stored = StorageFailure("the executable was not stored", stored.stored.error());
  }
  if (stored.recompiled) metrics_.Recompiled();
  outcome->store_ms = stored.store_ms;
  outcome->compiled = true;
  outcome->compile_ms = compiled->compile_ms;
  outcome->entry = EntryView{
      .id = id,
      .plan = std::string(fusion::PlanKindName(call.options.plan)),
      .options_json = stored.notes.options.dump(),
      .entry_compile_ms = compiled->compile_ms,
      .kernels = compiled->kernels,
      .estimated_us = compiled->estimated_us,
      .created_ms = stored.created_ms,
      .executable = std::move(stored.executable),
  };
  if (!outcome->not_stored) entries_.Remember(outcome->entry, outcome->entry.executable->size());
  if (to_publish != nullptr && options_.shared != nullptr) *to_publish = std::move(shared_copy);
  return outcome;
}

void CompileService::PublishFailure(const cache::EntryId& id, const Error& error) {
  if (options_.shared == nullptr) return;
  // Only what the same module fails with again, wherever it is compiled:
  // not kiln's own faults, a busy or stopping server, or a cancelled compile.
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kResourceExhausted:
    case ErrorCode::kFailedPrecondition:
    case ErrorCode::kOutOfRange:
    case ErrorCode::kUnimplemented:
      break;
    default:
      return;
  }
  (void)options_.shared->PublishFailure(id, cache::shared::SharedFailure{.code = error.code,
                                                                         .reason = std::string(error.reason()),
                                                                         .message = error.ToString(),
                                                                         .found_by = {}});
}

void CompileService::Publish(const cache::BundleEntry& entry) {
  if (options_.shared == nullptr) return;
  // Best effort: a failure is counted by the tier and the entry stays local.
  (void)options_.shared->Publish(entry);
}

}  // namespace kiln::service
