// KilnService: the API of `kiln serve` (schema/openapi.yaml) over the cache
// store, the compiler and the device pool.
//
// The service owns the store, the device pool, the compile threads, the
// single-flight table, the program cache, the request-body map and the
// executable index of the hit path, the autotuning jobs and the metrics; RegisterRoutes adds its
// handlers to a Router, and the HttpServer running that router must stop
// before the service is destroyed. Handlers run on the HTTP worker pool
// (SQLite, parsing) or hand their work on: compiles to the compile threads,
// runs to the pool's chips, tunings to the tuning worker (tune_jobs.h, which
// waits for runs through tune_gate.h); answers come back through the Responder
// (uv_async_send). On the loop thread run only /healthz and the hit path's
// fast paths (routes_executables.cc, routes_compile.cc): GET/HEAD of an
// executable and a compile of a body seen before, answered from memory (the
// executable index and the store's hot set, after the in-memory auth
// checks); a memory miss falls through to the worker-pool handler.
//
// Errors are answered as JSON {"error": {"code", "message", ...}} with the
// statuses of the spec. Thread-safe: handlers run concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/version.h"
#include "cache/cache_store.h"
#include "cache/shared/lease_waiter.h"
#include "cache/shared/shared_tier.h"
#include "compiler/driver/plan_module.h"
#include "compiler/hlo/module.h"
#include "runtime/pool/device_pool.h"
#include "server/auth.h"
#include "server/executable_index.h"
#include "server/http/router.h"
#include "base/worker_pool.h"
#include "server/program_cache.h"
#include "server/stats_history.h"
#include "server/store_watcher.h"
#include "server/request_key_map.h"
#include "server/service_metrics.h"
#include "server/shared_metrics.h"
#include "server/single_flight.h"
#include "server/tune_gate.h"
#include "server/tune_jobs.h"

namespace kiln::server {

struct ServiceOptions {
  std::string db_path = "./kiln.db";
  uint64_t max_store_bytes = 0;  // 0: unlimited
  std::string pool_spec = "v5e:4";
  size_t pool_queue_capacity = 64;  // runs waiting; beyond: 503 pool_saturated
  int compile_threads = 2;
  size_t compile_queue_capacity = 256;  // distinct compiles waiting; beyond: 503 overloaded
  Authenticator auth = Authenticator::Disabled();
  size_t program_cache_entries = 64;
  // Evaluator work units (about a nanosecond each) per kernel of a run:
  // ends a while(true) over scalars in a few seconds; the corpus's largest
  // runs need 2.7*10^9.
  int64_t execute_step_budget = int64_t{1} << 32;
  // The longest an execute may take, queued and running (504 beyond); a
  // request may ask for less.
  std::chrono::milliseconds execute_timeout{60'000};
  // Host memory the runs together may hold (0: no budget); a run that does
  // not fit waits up to host_memory_wait, then answers 503.
  uint64_t host_memory_bytes = 0;
  std::chrono::milliseconds host_memory_wait{10'000};
  std::string version = std::string(kKilnVersion);
  // Autotuning jobs (POST /v1/tune): tunings at a time, and jobs that may
  // wait (beyond: 503 tune_queue_full).
  int tune_workers = 1;
  size_t tune_queue_capacity = 16;
  // How often the server takes other processes' changes to its store
  // (StoreWatcher): an entry evicted, quarantined or rewritten elsewhere is
  // served from memory at most about this long.
  std::chrono::milliseconds store_watch_interval{50};
  // The counters behind GET /v1/stats/history and the dashboard's charts:
  // sampled this often, the newest stats_history_samples kept (an hour).
  std::chrono::milliseconds stats_history_interval{10'000};
  size_t stats_history_samples = 360;
  // Seconds of tuning queued for every compile miss, after it is answered
  // (`kiln serve --tune-in-background`); 0: off. Dropped, and counted, when
  // the tuning queue is full.
  double tune_in_background_s = 0;
  // The shared second tier (`kiln serve --shared URL`): none when unset.
  std::optional<cache::shared::SharedTierOptions> shared = std::nullopt;
};

class KilnService {
 public:
  // Opens the store and starts the pool and the compile threads.
  static Result<std::unique_ptr<KilnService>> Create(ServiceOptions options);
  ~KilnService();

  KilnService(const KilnService&) = delete;
  KilnService& operator=(const KilnService&) = delete;

  // Adds every route of the API. Fails only on a routing bug.
  Status RegisterRoutes(http::Router& router);
  // "METHOD /pattern" for every route RegisterRoutes adds (HEAD is served
  // by the GET routes).
  static std::vector<std::string> RouteTable();

  // Makes /healthz answer 503 "draining" while `draining()` is true (the
  // transport's HttpServer::draining). Call before the server starts.
  void SetDrainingProbe(std::function<bool()> draining) { draining_ = std::move(draining); }

  // Shutdown: refuses new runs and stops every run still queued or running
  // at `by` (they answer 503 draining), so the transport's grace period can
  // end with their answers written; cancels every tuning job (a running one
  // stops after its current trial or kernel). Any thread; does not wait.
  void BeginShutdown(std::chrono::steady_clock::time_point by) {
    shared_stopping_ = true;
    tune_jobs_->BeginShutdown();
    pool_->Shutdown(by);
  }

  // The registry the HttpServer should record into (HttpServerOptions::metrics).
  metrics::MetricsRegistry& metrics_registry() { return metrics_.registry(); }
  const ServiceOptions& options() const { return options_; }
  // Why the store cannot write now (read-only, disk full, no room for its
  // delete reserve), for an operator; empty when it can.
  std::string StoreWarning() const;
  runtime::pool::DevicePool& pool() { return *pool_; }
  // The shared tier (`--shared`), or null.
  cache::shared::SharedTier* shared_tier() { return shared_.get(); }

 private:
  // A request past authentication: who asks and in which namespace.
  struct Call {
    http::Request request;
    http::Responder respond;
    Principal principal;
    std::string tenant;  // the namespace the entries live in
  };
  using RouteFn = void (KilnService::*)(Call call);
  // Forgets the index and program-cache copies of entries changed in the
  // store (StoreWatcher's callback; any thread).
  void DropInvalidated(const cache::CacheStore::Invalidations& taken);
  // A fast path after authentication: answers from memory or returns nullopt.
  using FastRouteFn = std::optional<http::Response> (KilnService::*)(const http::Request& request,
                                                                     const std::string& tenant);
  struct FlightOutcome;
  using Flight = std::shared_ptr<const FlightOutcome>;
  struct CompileTimings;

  explicit KilnService(ServiceOptions options);
  http::Handler Guard(Role required, RouteFn route);
  http::FastPath GuardFast(Role required, FastRouteFn route);
  // Writes the store's buffered hit counts on a compile thread (at most one
  // such write queued at a time); the loop thread never touches SQLite.
  void ScheduleHitStatsFlush();

  // routes_compile.cc
  std::optional<http::Response> FastCompile(const http::Request& request, const std::string& tenant);
  void Compile(Call call);
  void AnswerCompile(http::Responder& respond, const EntryView& entry, CacheOutcome outcome, bool fast_path,
                     bool return_executable, double compile_ms, CompileTimings timings);
  // `not_stored`: the entry was compiled but not stored, and why;
  // `from_shared`: it came from the shared tier (`tier` says so).
  http::Response CompileResponse(const EntryView& entry, CacheOutcome outcome, bool fast_path, bool return_executable,
                                 double compile_ms, const CompileTimings& timings, const Error* not_stored = nullptr,
                                 bool from_shared = false);
  // `source_text`: the module's HLO text, stored beside the entry and,
  // with background tuning on, queued to be tuned once the miss is
  // answered and stored.
  void StartCompile(const std::string& flight_key, std::shared_ptr<hlo::Module> module,
                    driver::CompileOptions options, cache::EntryId id, hlo::Hash128 request_hash,
                    std::string source_text, std::string client);
  // Logs a stored compile for recompile diagnostics (recompile_report.h);
  // `record` is CompileRecordOf the module as sent, before its compile.
  void RecordCompile(cache::CompileRecord record, double compile_ms);
  // `source_text` is the module's HLO text, stored beside the entry. With
  // a shared tier, `to_publish` receives the compiled entry, for the caller
  // to publish once the trainer has its answer (PublishToShared).
  Flight CompileAndStore(hlo::Module& module, std::string_view source_text, const driver::CompileOptions& options,
                         const cache::EntryId& id, const hlo::Hash128& request_hash,
                         std::optional<cache::BundleEntry>* to_publish = nullptr);
  Result<std::optional<EntryView>> LookUp(const cache::EntryId& id);
  // Answers a miss's flight 503 overloaded (no compile thread took it).
  void RefuseCompile(const std::string& flight_key);
  // shared_compile.cc. A compile's work once its lease question is settled:
  // with the shared tier's lease, or null (no shared tier, or it failed).
  using CompileTask = std::function<void(std::shared_ptr<cache::shared::SharedTier::Lease>)>;
  // What a look into the shared tier found (on a shared thread): the entry
  // (kept locally, then answered), the lease (the compile goes on with it),
  // another server's live lease (a wait on the lease waiter, which comes
  // back here), or a failure (the compile goes on without a lease). A wait
  // cancelled because every client left ends the flight.
  void OnSharedClaim(const std::string& flight_key, const cache::EntryId& id,
                     Result<cache::shared::SharedTier::Claim> claim, CompileTask compile);
  void EndAbandonedWait(const std::string& flight_key, const cache::EntryId& id, CompileTask compile);
  // Stores a fetched entry in the local tier (its frame as fetched) and
  // indexes it; fails like CacheStore::ImportBundle.
  Status KeepFetched(cache::BundleEntry fetched, const EntryView& view);
  // The shared tier's copy of a stored (or compiled) entry.
  static cache::BundleEntry SharedEntryOf(const cache::PutRequest& put, int64_t created_ms);
  // Publishes an entry to the shared tier (a Redis round trip and a zstd
  // pass: off the trainer's path); best effort.
  void PublishToShared(cache::BundleEntry entry);
  // routes_explain.cc
  void Explain(Call call);
  // routes_executables.cc
  std::optional<http::Response> FastGetExecutable(const http::Request& request, const std::string& tenant);
  void GetExecutable(Call call);
  void DeleteExecutable(Call call);
  // The entry a key names in namespace `tenant` (no other): from the
  // executable index, else from a store listing (then indexed). Without
  // `use_index` the index is skipped (it pointed at an entry now gone).
  Result<cache::EntryId> FindEntry(const std::string& tenant, std::string_view key_text, bool use_index = true);
  // Indexes an entry the store just answered, for the hit path.
  void Index(EntryView view, uint64_t raw_bytes);
  // routes_execute.cc
  void Execute(Call call);
  Result<std::shared_ptr<const ReadyProgram>> ReadyProgramFor(const cache::EntryId& id);
  // routes_tune.cc
  void StartTune(Call call);
  void GetTune(Call call);
  void ListTunes(Call call);
  void CancelTune(Call call);
  // Queues a background tuning of a stored entry (a miss just answered);
  // the job reads the entry's HLO text from the store when it starts.
  void QueueBackgroundTune(const cache::EntryId& id, const driver::CompileOptions& options);
  // A tuning job's work, on the tuning worker (TuneJobs::Work).
  Result<TuneOutcome> RunTuneJob(const TuneJobSpec& spec, TuneProgress& progress,
                                 const std::function<bool()>& cancelled);
  // routes_admin.cc
  void Stats(Call call);
  void Entries(Call call);
  void Pool(Call call);
  void Metrics(Call call);
  void StatsHistoryRoute(Call call);
  // routes_recompiles.cc
  void Recompiles(Call call);
  // routes_timing.cc: the entry's simulated profile; `key` gets its hex.
  Result<runtime::timing::DeviceProfile> SimulateEntry(const Call& call, std::string* key);
  void TimeExecutable(Call call);
  void TraceExecutable(Call call);
  http::Response Health() const;
  static http::Response DashboardResponse();
  int PerKindIndex(int pool_index) const;

  const ServiceOptions options_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  ServiceMetrics metrics_;
  std::unique_ptr<cache::CacheStore> store_;
  std::unique_ptr<cache::shared::SharedTier> shared_;  // null without --shared
  std::unique_ptr<SharedTierMetrics> shared_metrics_;  // likewise
  std::unique_ptr<WorkerPool> shared_threads_;   // likewise: one look into Redis each
  std::unique_ptr<cache::shared::LeaseWaiter> lease_waiter_;  // likewise: waits on other servers' leases
  std::atomic<bool> shared_stopping_{false};           // ends those waits at shutdown
  std::unique_ptr<runtime::pool::DevicePool> pool_;
  std::vector<int> per_kind_index_;  // pool chip index -> index among its kind
  std::unique_ptr<WorkerPool> compile_threads_;
  SingleFlight<Flight> flights_;
  ProgramCache programs_;
  RequestKeyMap request_keys_;
  ExecutableIndex index_;
  std::atomic<bool> hit_flush_queued_{false};
  TuneGate tune_gate_;                  // executes in flight; tuning waits for none
  std::unique_ptr<TuneJobs> tune_jobs_;  // after everything its work uses
  std::unique_ptr<StoreWatcher> watcher_;  // after the caches it drops from
  std::unique_ptr<StatsHistory> history_;  // samples metrics_
  std::function<bool()> draining_;  // set before serving; then read-only

  // Runs waiting per chip kind, and the key each chip is running.
  mutable std::mutex pool_mu_;
  std::unordered_map<std::string, size_t> queued_by_kind_;  // guarded by pool_mu_
  std::vector<std::string> running_key_;                    // guarded by pool_mu_
};

}  // namespace kiln::server
