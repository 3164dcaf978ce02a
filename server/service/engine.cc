#include "server/service/engine.h"

#include <algorithm>
#include <map>

namespace kiln::service {

Result<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  if (options.compile_threads < 1) return InvalidArgumentError("compile threads must be at least 1");
  if (options.tune_workers < 1) return InvalidArgumentError("tuning workers must be at least 1");
  std::unique_ptr<Engine> engine(new Engine(std::move(options)));
  const EngineOptions& opts = engine->options_;
  cache::CacheStoreOptions store_options;
  store_options.path = opts.db_path;
  store_options.max_bytes = opts.max_store_bytes;
  auto store = cache::CacheStore::Open(store_options);
  if (!store) return store.error().WithContext("database " + opts.db_path);
  engine->store_ = std::move(*store);
  if (opts.shared) {
    engine->shared_ = std::make_unique<cache::shared::SharedTier>(*opts.shared);
    engine->shared_metrics_ = std::make_unique<SharedTierMetrics>(engine->metrics_.registry());
  }

  runtime::pool::PoolOptions pool_options;
  pool_options.max_queued = opts.pool_queue_capacity;
  pool_options.host_memory_bytes = opts.host_memory_bytes;
  pool_options.max_memory_wait = opts.host_memory_wait;
  KILN_ASSIGN_OR_RETURN(engine->pool_, runtime::pool::DevicePool::Create(opts.pool_spec, pool_options));
  engine->compile_threads_ = std::make_unique<WorkerPool>(opts.compile_threads, opts.compile_queue_capacity);
  engine->entries_ = std::make_unique<StoredEntries>(*engine->store_, *engine->compile_threads_);
  engine->execute_ = std::make_unique<ExecuteService>(
      *engine->store_, *engine->pool_, engine->tune_gate_, engine->metrics_,
      ExecuteServiceOptions{.program_cache_entries = opts.program_cache_entries,
                            .step_budget = opts.execute_step_budget});
  engine->compile_ = std::make_unique<CompileService>(
      *engine->store_, *engine->entries_, engine->metrics_, *engine->compile_threads_,
      CompileServiceOptions{.compile_queue_capacity = opts.compile_queue_capacity,
                            .shared = engine->shared_.get(),
                            .shared_threads = std::max(8, 4 * opts.compile_threads)});
  Engine* self = engine.get();
  engine->tune_ = std::make_unique<TuneService>(
      *engine->store_, *engine->entries_, engine->tune_gate_,
      TuneServiceOptions{.workers = opts.tune_workers,
                         .queue_capacity = opts.tune_queue_capacity,
                         .background_seconds = opts.tune_in_background_s,
                         .shared = engine->shared_.get()},
      [self](const cache::EntryId& id) { self->Forget(id); },
      [self](const cache::BundleEntry& entry) { self->compile_->Publish(entry); });
  if (opts.tune_in_background_s > 0) {
    engine->compile_->set_on_stored([self](const cache::EntryId& id, const driver::CompileOptions& compiled) {
      self->tune_->QueueBackground(id, compiled);
    });
  }
  if (engine->shared_ != nullptr) {
    // Tuned plans other servers publish, and the events lease waits want.
    engine->fleet_ = std::make_unique<FleetSync>(*engine->shared_, *engine->store_, *engine->compile_,
                                                 [self](const cache::EntryId& id) { self->Forget(id); });
    engine->compile_->set_on_hit([self](const EntryView& entry) {
      const bool tuned = entry.plan == cache::PlanKindName(cache::PlanKind::kTuned);
      self->fleet_->NoteHit(entry.id, cache::shared::EntryVersion{.rank = tuned ? 1 : 0, .created_ms = entry.created_ms});
    });
  }
  engine->watcher_ = std::make_unique<StoreWatcher>(
      *engine->store_, opts.store_watch_interval,
      [self](const cache::CacheStore::Invalidations& taken) { self->DropInvalidated(taken); });
  engine->history_ = std::make_unique<StatsHistory>(
      [self] {
        const CompileCounters compiles = self->metrics_.compile_counters();
        const ExecuteCounters runs = self->metrics_.execute_counters();
        return StatsSample{.unix_ms = self->store_->Now(),
                           .hits = compiles.hits + compiles.joined,
                           .misses = compiles.misses,
                           .compile_seconds_saved = compiles.compile_ms_saved / 1000,
                           .executions = runs.requests,
                           .device_seconds = runs.device_us_total * 1e-6};
      },
      opts.stats_history_interval, opts.stats_history_samples);
  return engine;
}

Engine::~Engine() {
  // The watcher first; then tuning (it uses the store, the gate and the
  // caches); then compiles (they write the store): the shared tier's waits
  // and threads, which hand compiles on, then the compile threads; then runs
  // (they answer through the pool's callbacks); then the store closes.
  fleet_.reset();
  history_.reset();
  watcher_.reset();
  tune_.reset();
  if (compile_) compile_->Shutdown();
  compile_threads_.reset();
  compile_.reset();
  pool_.reset();
  execute_.reset();
  entries_.reset();
  store_.reset();
}

void Engine::BeginShutdown(std::chrono::steady_clock::time_point by) {
  compile_->BeginShutdown();
  tune_->BeginShutdown();
  pool_->Shutdown(by);
}

double Engine::uptime_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void Engine::Forget(const cache::EntryId& id) {
  entries_->Forget(id);
  execute_->Forget(id);
}

void Engine::DropInvalidated(const cache::CacheStore::Invalidations& taken) {
  if (taken.everything) {
    entries_->ForgetAll();
    execute_->ForgetAll();
    return;
  }
  for (const cache::EntryId& id : taken.ids) Forget(id);
}

void Engine::RefreshGauges() {
  if (Result<std::shared_ptr<const cache::StoreTotals>> totals = store_->Totals(); totals) {
    const cache::NamespaceTotals& all = (*totals)->all;
    metrics_.SetStoreFigures(all.live.entries + all.quarantined.entries,
                             all.live.stored_bytes + all.quarantined.stored_bytes, (*totals)->evicted_total,
                             (*totals)->quarantined_total);
  }
  const runtime::pool::PoolStatus status = pool_->status();
  metrics_.SetHostMemory(status.host_memory_budget, status.host_memory_in_use, status.waiting_for_memory);
  std::map<std::string, std::pair<int, double>> kinds;  // busy, summed utilization
  std::map<std::string, int> counts;
  for (const runtime::pool::ChipStatus& chip : status.chips) {
    kinds[chip.kind].first += chip.busy ? 1 : 0;
    kinds[chip.kind].second += chip.utilization;
    counts[chip.kind] += 1;
  }
  for (const auto& [kind, figures] : kinds) {
    auto queued = status.queued_by_kind.find(kind);
    metrics_.SetPoolKind(kind, figures.first, queued == status.queued_by_kind.end() ? 0 : queued->second,
                         figures.second / counts[kind]);
  }
  Result<std::map<std::string, int64_t>> records = store_->tuning_records().CountsByTenant();
  metrics_.SetTuneFigures(tune_->counts(), records ? *records : std::map<std::string, int64_t>{});
  if (shared_ != nullptr)
    shared_metrics_->Update(shared_->Counters(), shared_->Health(), compile_->lease_waiting(), fleet_->Counters());
}

}  // namespace kiln::service
