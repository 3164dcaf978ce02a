// Engine: kiln's services over one cache store and one device pool, apart
// from any front door.
//
// The engine owns the store, the pool, the shared tier (when configured),
// the compile threads, the index of stored entries (stored_entries.h) and
// the three services: compile (compile_service.h), execute
// (execute_service.h) and tune (tune_service.h); a watcher keeps their
// memory in step with other processes' changes to the store
// (store_watcher.h), and a sampler keeps the stats history the dashboard
// charts. The HTTP API (server/api/kiln_api.h) is one front door over it;
// a test or a tool may hold an engine without HTTP.
//
// Create fails with the store's or the pool's error (a database that cannot
// be opened, a bad pool spec) or invalid_argument for a bad option.
// Thread-safe: the services are. BeginShutdown refuses new runs and tuning
// jobs and stops runs still going at `by`; the destructor stops the rest in
// order (tuning, compiles, runs) and closes the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "base/worker_pool.h"
#include "cache/cache_store.h"
#include "cache/shared/shared_tier.h"
#include "runtime/pool/device_pool.h"
#include "server/service/compile_service.h"
#include "server/service/execute_service.h"
#include "server/service/fleet_sync.h"
#include "server/service/service_metrics.h"
#include "server/service/shared_metrics.h"
#include "server/service/stats_history.h"
#include "server/service/store_watcher.h"
#include "server/service/stored_entries.h"
#include "server/service/tune_gate.h"
#include "server/service/tune_service.h"

namespace kiln::service {

struct EngineOptions {
  std::string db_path = std::string(cache::kDefaultStorePath);
  uint64_t max_store_bytes = 0;  // 0: unlimited
  std::string pool_spec = "v5e:4";
  size_t pool_queue_capacity = 64;  // runs waiting; beyond: 503 pool_saturated
  int compile_threads = 2;
  size_t compile_queue_capacity = 256;  // distinct compiles waiting; beyond: 503 overloaded
  size_t program_cache_entries = 64;
  // Evaluator work units (about a nanosecond each) per kernel of a run:
  // ends a while(true) over scalars in a few seconds; the corpus's largest
  // runs need 2.7*10^9.
  int64_t execute_step_budget = int64_t{1} << 32;
  // Host memory the runs together may hold (0: no budget); a run that does
  // not fit waits up to host_memory_wait, then fails 503.
  uint64_t host_memory_bytes = 0;
  std::chrono::milliseconds host_memory_wait{10'000};
  // Tunings at a time, and jobs that may wait (beyond: 503 tune_queue_full).
  int tune_workers = 1;
  size_t tune_queue_capacity = 16;
  // Seconds of tuning queued for every compile miss, once it is answered
  // and stored (`kiln serve --tune-in-background`); 0: off.
  double tune_in_background_s = 0;
  // How often the engine takes other processes' changes to its store: an
  // entry evicted, quarantined or rewritten elsewhere is served from
  // memory at most about this long.
  std::chrono::milliseconds store_watch_interval{50};
  // The counters behind the stats history: sampled this often, the newest
  // stats_history_samples kept (an hour).
  std::chrono::milliseconds stats_history_interval{10'000};
  size_t stats_history_samples = 360;
  // The shared second tier (`kiln serve --shared URL`): none when unset.
  std::optional<cache::shared::SharedTierOptions> shared = std::nullopt;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Refuses new runs and stops every run still queued or running at `by`
  // (they fail 503 draining); cancels every tuning job (a running one stops
  // after its current trial or kernel). Any thread; does not wait.
  void BeginShutdown(std::chrono::steady_clock::time_point by);

  CompileService& compile() { return *compile_; }
  ExecuteService& execute() { return *execute_; }
  TuneService& tune() { return *tune_; }
  StoredEntries& entries() { return *entries_; }
  cache::CacheStore& store() { return *store_; }
  runtime::pool::DevicePool& pool() { return *pool_; }
  cache::shared::SharedTier* shared_tier() { return shared_.get(); }  // null without one
  FleetSync* fleet() { return fleet_.get(); }                          // likewise
  ServiceMetrics& metrics() { return metrics_; }
  const StatsHistory& history() const { return *history_; }
  const EngineOptions& options() const { return options_; }
  double uptime_seconds() const;

  // Sets the gauges of the metrics from the store's totals, the pool, the
  // tuning jobs and the shared tier (before they are read).
  void RefreshGauges();
  // Drops every in-memory copy of `id` (the index, the loaded program):
  // the next request reads the store.
  void Forget(const cache::EntryId& id);

 private:
  explicit Engine(EngineOptions options) : options_(std::move(options)) {}
  void DropInvalidated(const cache::CacheStore::Invalidations& taken);

  const EngineOptions options_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  ServiceMetrics metrics_;
  std::unique_ptr<cache::CacheStore> store_;
  std::unique_ptr<cache::shared::SharedTier> shared_;  // null without --shared
  std::unique_ptr<SharedTierMetrics> shared_metrics_;  // likewise
  std::unique_ptr<runtime::pool::DevicePool> pool_;
  std::unique_ptr<WorkerPool> compile_threads_;  // compiles, and the hit path's hit-count writes
  std::unique_ptr<StoredEntries> entries_;
  TuneGate tune_gate_;  // executes in flight; tuning waits for none
  std::unique_ptr<ExecuteService> execute_;
  std::unique_ptr<CompileService> compile_;
  std::unique_ptr<TuneService> tune_;        // after everything its work uses
  std::unique_ptr<StoreWatcher> watcher_;    // after the caches it drops from
  std::unique_ptr<StatsHistory> history_;    // samples metrics_
  std::unique_ptr<FleetSync> fleet_;         // with a shared tier: after the services it drives
};

}  // namespace kiln::service
