// POST /v1/compile: the fast path, parse + fingerprint, cache lookup, and
// single-flight compiles on the compile threads.
#include <chrono>
#include <nlohmann/json.hpp>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "compiler/driver/compile_module.h"
#include "compiler/driver/module_topology.h"
#include "server/compile_flight.h"
#include "server/compile_request.h"
#include "server/compiled_entry.h"
#include "server/entry_json.h"
#include "server/http/json_response.h"
#include "server/kiln_service.h"
#include "server/service_errors.h"

namespace kiln::server {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Bodies hashed on the loop thread by the fast path are at most this big
// (XXH3 at several GB/s: tens of microseconds); larger ones go to a worker.
constexpr size_t kMaxFastPathBodyBytes = 256 << 10;

EntryView ViewOf(const cache::CacheHit& hit) {
  EntryView view = ViewOfMetadata(hit.entry->metadata);
  view.executable = http::Bytes(hit.entry, &hit.entry->executable);  // shares the hot entry's bytes
  return view;
}

std::string Decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

}  // namespace

Result<std::optional<EntryView>> KilnService::LookUp(const cache::EntryId& id) {
  Result<std::optional<cache::CacheHit>> hit = store_->Get(id);
  if (!hit) return std::unexpected(InternalFailure("cache lookup", hit.error()));
  if (!*hit) return std::optional<EntryView>();
  EntryView view = ViewOf(**hit);
  Index(view, view.executable->size());
  return std::optional<EntryView>(std::move(view));
}

std::optional<http::Response> KilnService::FastCompile(const http::Request& request, const std::string& tenant) {
  // Parsing JSON or hashing a big body is CPU work for a worker.
  if (request.body.size() > kMaxFastPathBodyBytes || HasJsonBody(request)) return std::nullopt;
  CompileTimings timings;
  Result<CompileRequest> parsed = ParseCompileRequestKey(request, tenant);
  if (!parsed) return std::nullopt;  // the handler explains the 400
  std::optional<hlo::Hash128> key = request_keys_.Find(parsed->request_hash);
  if (!key) return std::nullopt;
  std::shared_ptr<const IndexedEntry> entry = index_.Find(tenant, *key);
  if (entry == nullptr || entry->view.id.chip != parsed->options.chip) return std::nullopt;
  cache::CacheStore::HotHit hot = store_->TryGetHot(entry->view.id);
  if (hot.entry == nullptr) return std::nullopt;
  if (hot.hit_stats_due) ScheduleHitStatsFlush();
  timings.lookup_ms = MsSince(timings.start);
  metrics_.CompileRequested();
  metrics_.CompileAnswered(CacheOutcome::kHit, /*fast_path=*/true, entry->view.entry_compile_ms);
  EntryView view = entry->view;
  view.executable = http::Bytes(hot.entry, &hot.entry->executable);
  return CompileResponse(view, CacheOutcome::kHit, /*fast_path=*/true, parsed->return_executable, 0, timings);
}

void KilnService::Compile(Call call) {
  CompileTimings timings;
  metrics_.CompileRequested();
  auto fail = [&](const Error& error) {
    metrics_.CompileFailed();
    call.respond(http::ErrorResponse(error));
  };
  Result<CompileRequest> parsed = ParseCompileRequest(call.request, call.tenant);
  if (!parsed) return fail(parsed.error());
  CompileRequest& request = *parsed;
  cache::EntryId id{.tenant = call.tenant, .key = {}, .chip = request.options.chip};

  // Fast path: a body seen before names its key without parsing.
  auto lookup_start = Clock::now();
  std::optional<hlo::Hash128> known = request_keys_.Find(request.request_hash);
  if (!known) {
    auto stored = store_->LookupRequest(call.tenant, request.request_hash, id.chip, id.format_version);
    if (stored && *stored) known = **stored;
  }
  if (known) {
    id.key = *known;
    Result<std::optional<EntryView>> hit = LookUp(id);
    if (!hit) return fail(hit.error());
    if (*hit) {
      timings.lookup_ms = MsSince(lookup_start);
      request_keys_.Remember(request.request_hash, id.key);
      metrics_.CompileAnswered(CacheOutcome::kHit, /*fast_path=*/true, (*hit)->entry_compile_ms);
      return AnswerCompile(call.respond, **hit, CacheOutcome::kHit, true, request.return_executable, 0, timings);
    }
  }
  timings.lookup_ms = MsSince(lookup_start);

  auto parse_start = Clock::now();
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(request.hlo, "<hlo>");
  if (!module) return fail(module.error().WithReason("hlo_parse_error"));
  if (Status verified = hlo::VerifyModule(**module); !verified)
    return fail(verified.error().WithReason("hlo_verify_error"));
  timings.parse_ms = MsSince(parse_start);
  // A module for several devices compiles for its own slice unless the
  // request names one (and one that does not fit it is refused): the key
  // carries the topology.
  if (Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(**module, request.options); !resolved) {
    return fail(resolved.error());
  }

  auto fingerprint_start = Clock::now();
  Result<hlo::Fingerprint> fingerprint =
      hlo::FingerprintModule(**module, driver::FingerprintOptionsFor(request.options));
  if (!fingerprint) return fail(fingerprint.error().WithReason("hlo_verify_error"));
  id.key = fingerprint->key;
  timings.fingerprint_ms = MsSince(fingerprint_start);

  lookup_start = Clock::now();
  Result<std::optional<EntryView>> hit = LookUp(id);
  if (!hit) return fail(hit.error());
  timings.lookup_ms += MsSince(lookup_start);
  request_keys_.Remember(request.request_hash, id.key);
  if (*hit) {
    metrics_.CompileAnswered(CacheOutcome::kHit, /*fast_path=*/false, (*hit)->entry_compile_ms);
    return AnswerCompile(call.respond, **hit, CacheOutcome::kHit, false, request.return_executable, 0, timings);
  }

  // A miss: the first request for the key compiles, the others wait on it.
  const std::string flight_key = id.ToString();
  const Clock::time_point joined_at = Clock::now();
  auto answer = [this, respond = std::move(call.respond), timings, joined_at,
                 return_executable = request.return_executable](const Flight& flight,
                                                                SingleFlight<Flight>::Role role) mutable {
    if (flight->error) {
      metrics_.CompileFailed();
      return respond(http::ErrorResponse(*flight->error));
    }
    const bool leader = role == SingleFlight<Flight>::Role::kLeader;
    CacheOutcome outcome = !leader || flight->shared_waited ? CacheOutcome::kJoined
                           : flight->compiled              ? CacheOutcome::kMiss
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
    respond(CompileResponse(flight->entry, outcome, false, return_executable, compile_ms, timings,
                            flight->not_stored ? &*flight->not_stored : nullptr, flight->from_shared));
  };
  std::function<bool()> gone = nullptr;
  if (call.request.cancel) gone = [cancel = call.request.cancel] { return cancel->cancelled(); };
  if (flights_.Join(flight_key, std::move(answer), std::move(gone)) == SingleFlight<Flight>::Role::kLeader) {
    // The module's text goes along: the store keeps it to explain later
    // misses, and background tuning tunes it once the miss is answered.
    StartCompile(flight_key, std::shared_ptr<hlo::Module>(std::move(*module)), request.options, id,
                 request.request_hash, std::move(request.hlo), std::move(request.client));
  }
}

void KilnService::StartCompile(const std::string& flight_key, std::shared_ptr<hlo::Module> module,
                               driver::CompileOptions options, cache::EntryId id, hlo::Hash128 request_hash,
                               std::string source_text, std::string client) {
  auto text = std::make_shared<std::string>(std::move(source_text));
  // `lease`: the shared tier's compile lease, held until the entry is
  // published (null without a shared tier, or when it failed).
  auto compile = [this, flight_key, module, options, id, request_hash, text, client = std::move(client)](
                     std::shared_ptr<cache::shared::SharedTier::Lease> lease) {
    // Read before the compile's passes change the module.
    cache::CompileRecord record = CompileRecordOf(*module, id, client, options);
    std::optional<cache::BundleEntry> to_publish;
    Flight flight = CompileAndStore(*module, *text, options, id, request_hash, &to_publish);
    // The compile's diagnostics record is written before the answer (one
    // small insert after the entry's own), so a trainer that asks
    // /v1/recompiles or /metrics next sees its compile. The trainer is
    // answered before the entry is published to the shared tier, while the
    // lease is still held, so servers waiting on it find the entry.
    if (flight->compiled && !flight->not_stored) RecordCompile(std::move(record), flight->compile_ms);
    flights_.Finish(flight_key, flight);
    if (to_publish) PublishToShared(std::move(*to_publish));
    lease.reset();  // published (or failed): others may look now
    const bool stored = !flight->error && flight->compiled && !flight->not_stored;
    if (options_.tune_in_background_s > 0 && stored && options.plan == fusion::PlanKind::kHeuristic) {
      QueueBackgroundTune(id, driver::NormalizedOptions(options));
    }
  };
  if (shared_ == nullptr) {
    WorkerPool::Task task = [compile = std::move(compile)]() mutable { compile(nullptr); };
    if (!compile_threads_->TrySubmit(task)) RefuseCompile(flight_key);
    return;
  }
  // With a shared tier, the look into Redis runs on the shared threads and
  // any wait on another server's compile on the lease waiter, so waiting
  // holds no thread; only a real compile goes on to a compile thread.
  WorkerPool::Task claim = [this, flight_key, id, compile = std::move(compile)]() mutable {
    OnSharedClaim(flight_key, id, shared_->TryClaim(id), std::move(compile));
  };
  if (!shared_threads_->TrySubmit(claim)) RefuseCompile(flight_key);
}

void KilnService::RefuseCompile(const std::string& flight_key) {
  auto refused = std::make_shared<FlightOutcome>();
  refused->error =
      UnavailableError("every compile thread is busy and " + std::to_string(options_.compile_queue_capacity) +
                       " compiles are waiting; retry later")
          .WithReason("overloaded")
          .RetryAfter(1);
  flights_.Finish(flight_key, refused);
}

KilnService::Flight KilnService::CompileAndStore(hlo::Module& module, std::string_view source_text,
                                                 const driver::CompileOptions& options,
                                                 const cache::EntryId& id, const hlo::Hash128& request_hash,
                                                 std::optional<cache::BundleEntry>* to_publish) {
  auto outcome = std::make_shared<FlightOutcome>();
  // Another flight may have stored the key between this request's lookup
  // and its flight.
  Result<std::optional<EntryView>> existing = LookUp(id);
  if (existing && *existing) {
    outcome->entry = std::move(**existing);
    return outcome;
  }
  Result<driver::CompileOutput> compiled = driver::CompileModule(module, options);
  if (!compiled) {
    // A reason the compiler gave (program_too_large, invalid_collective)
    // says more than compile_failed.
    const std::string& reason = compiled.error().reason();
    outcome->error = InvalidArgumentError(compiled.error().ToString()).WithReason(reason.empty() ? "compile_failed" : reason);
    return outcome;
  }
  metrics_.Compiled(compiled->compile_ms);
  const EntryNotes notes = NotesOfCompile(*compiled, options);
  auto executable = std::make_shared<const std::string>(compiled->executable.begin(), compiled->executable.end());
  const std::string notes_text = SerializeEntryNotes(notes);
  cache::PutRequest put = PutOfCompile(id, *compiled, options, *executable, notes_text, request_hash);
  put.source_text = source_text;
  auto store_start = Clock::now();
  if (Status stored = store_->Put(put); !stored) {
    const cache::StorageProblem problem = cache::StorageProblemOf(stored.error());
    if (problem == cache::StorageProblem::kNone) {
      outcome->error = InternalFailure("storing the executable", stored.error());
      return outcome;
    }
    // A full disk or a read-only store: the compile is still answered,
    // with the executable, saying it was not stored and why.
    metrics_.NotStored(problem);
    outcome->not_stored = StorageFailure("the executable was not stored", stored.error());
  }
  outcome->store_ms = MsSince(store_start);
  outcome->compiled = true;
  outcome->compile_ms = compiled->compile_ms;
  outcome->entry = EntryView{
      .id = id,
      .plan = std::string(fusion::PlanKindName(options.plan)),
      .options_json = notes.options.dump(),
      .entry_compile_ms = compiled->compile_ms,
      .kernels = compiled->kernels,
      .estimated_us = compiled->estimated_us,
      .created_ms = UnixMs(),
      .executable = std::move(executable),
  };
  if (!outcome->not_stored) Index(outcome->entry, outcome->entry.executable->size());
  if (to_publish != nullptr && shared_ != nullptr) *to_publish = SharedEntryOf(put, outcome->entry.created_ms);
  return outcome;
}

void KilnService::RecordCompile(cache::CompileRecord record, double compile_ms) {
  record.compile_seconds = compile_ms / 1000;
  // Diagnostics only: a failure to log must not fail the compile.
  Result<int64_t> other_keys = store_->compile_log().Record(record);
  if (other_keys && *other_keys > 0) metrics_.Recompiled();
}

void KilnService::AnswerCompile(http::Responder& respond, const EntryView& entry, CacheOutcome outcome,
                                bool fast_path, bool return_executable, double compile_ms,
                                CompileTimings timings) {
  respond(CompileResponse(entry, outcome, fast_path, return_executable, compile_ms, timings));
}

http::Response KilnService::CompileResponse(const EntryView& entry, CacheOutcome outcome, bool fast_path,
                                            bool return_executable, double compile_ms, const CompileTimings& timings,
                                            const Error* not_stored, bool from_shared) {
  const std::string key = entry.id.key.Hex();
  http::Response response;
  if (return_executable) {
    response = http::Response::WithBytes(200, entry.executable, "application/vnd.kiln.executable");
  } else {
    nlohmann::json body = {
        {"key", key},
        {"cache", CacheOutcomeName(outcome)},
        {"chip", entry.id.chip},
        {"plan", entry.plan},
        {"options", nlohmann::json::parse(entry.options_json, nullptr, false)},
        {"fast_path", fast_path},
        {"compile_ms", compile_ms},
        {"entry_compile_ms", entry.entry_compile_ms},
        {"kernels", entry.kernels},
        {"estimated_us", entry.estimated_us},
        {"executable_bytes", entry.executable ? entry.executable->size() : 0},
        {"created", Rfc3339(entry.created_ms)},
        {"stored", not_stored == nullptr},
        {"tier", from_shared ? "shared" : "local"},
        {"timings",
         {{"parse_ms", timings.parse_ms},
          {"fingerprint_ms", timings.fingerprint_ms},
          {"lookup_ms", timings.lookup_ms},
          {"compile_ms", timings.compile_ms},
          {"store_ms", timings.store_ms},
          {"total_ms", MsSince(timings.start)}}},
    };
    if (not_stored != nullptr)
      body["not_stored"] = {{"code", not_stored->ReasonOrCodeName()}, {"message", http::ErrorMessage(*not_stored)}};
    response = http::JsonResponse(200, body);
  }
  response.headers.Set("X-Kiln-Key", key);
  response.headers.Set("X-Kiln-Stored", not_stored == nullptr ? "true" : "false");
  if (not_stored != nullptr) response.headers.Set("X-Kiln-Store-Error", std::string(not_stored->ReasonOrCodeName()));
  response.headers.Set("X-Kiln-Cache", std::string(CacheOutcomeName(outcome)));
  response.headers.Set("X-Kiln-Tier", from_shared ? "shared" : "local");
  response.headers.Set("X-Kiln-Compile-Ms", Decimal(compile_ms));
  response.headers.Set("X-Kiln-Kernels", std::to_string(entry.kernels));
  response.headers.Set("X-Kiln-Estimated-Us", Decimal(entry.estimated_us));
  response.headers.Set("ETag", "\"" + key + "\"");
  return response;
}

}  // namespace kiln::server
