// What `kiln serve` counts: the figures of GET /v1/stats and the kiln_*
// series of GET /metrics beyond the transport's own kiln_http_* ones.
//
// ServiceMetrics owns the MetricsRegistry the HttpServer records into, so
// one /metrics page shows both. Every method is thread-safe (atomics, and
// the registry's own locking); counters only grow.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "cache/storage_problem.h"
#include "base/metrics.h"
#include "server/service/tune_jobs.h"

namespace kiln::service {

enum class CacheOutcome { kHit, kMiss, kJoined };
std::string_view CacheOutcomeName(CacheOutcome outcome);  // "hit", "miss", "joined"

struct CompileCounters {
  int64_t requests = 0;
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t joined = 0;
  int64_t fast_path = 0;
  int64_t errors = 0;
  double compile_ms_total = 0;
  double compile_ms_saved = 0;
};

struct ExecuteCounters {
  int64_t requests = 0;
  int64_t errors = 0;
  double device_us_total = 0;
};

class ServiceMetrics {
 public:
  ServiceMetrics();

  metrics::MetricsRegistry& registry() { return registry_; }

  void CompileRequested() { compile_requests_.fetch_add(1, std::memory_order_relaxed); }
  // A compile answered from the cache or a flight. `fast_path`: the body was
  // recognised without parsing. `entry_compile_ms`: what the hit saved.
  void CompileAnswered(CacheOutcome outcome, bool fast_path, double entry_compile_ms);
  // This process compiled an executable in `compile_ms`.
  void Compiled(double compile_ms);
  // A compile of a module name already compiled as another key (same
  // tenant and chip): a recompile (GET /v1/recompiles says why).
  void Recompiled() { recompiles_total_.Increment(); }
  void CompileFailed() {
    compile_errors_.fetch_add(1, std::memory_order_relaxed);
    compile_errors_total_.Increment();
  }

  // A compile answered but not stored: the disk was full or the store read-only.
  void NotStored(cache::StorageProblem problem);

  void ExecuteRequested() { execute_requests_.fetch_add(1, std::memory_order_relaxed); }
  void Executed(std::string_view kind, double device_seconds);
  void ExecuteFailed() { execute_errors_.fetch_add(1, std::memory_order_relaxed); }
  // A run that ended without a result, by how: "deadline", "cancelled",
  // "shutdown", "memory_busy", "too_large", "failed".
  void ExecuteEnded(std::string_view how) { executions_ended_.WithLabels({std::string(how)}).Increment(); }

  // Gauges refreshed before /metrics renders.
  void SetStoreFigures(int64_t entries, uint64_t stored_bytes, int64_t evicted_total, int64_t quarantined_total);
  void SetPoolKind(std::string_view kind, int busy, size_t queue_depth, double utilization);
  void SetHostMemory(uint64_t budget_bytes, uint64_t in_use_bytes, size_t waiting_runs);
  // Autotuning jobs (TuneJobs::counts) and the store's tuning records by
  // tenant ('' for records from before records had tenants).
  void SetTuneFigures(const TuneCounts& counts, const std::map<std::string, int64_t>& records_by_tenant);

  CompileCounters compile_counters() const;
  ExecuteCounters execute_counters() const;

 private:
  metrics::MetricsRegistry registry_;
  metrics::CounterFamily& lookups_;
  metrics::Counter* lookups_by_outcome_[3] = {};  // by CacheOutcome
  metrics::Counter& fast_path_total_;
  metrics::Counter& saved_seconds_;
  metrics::Counter& compile_errors_total_;
  metrics::Counter& recompiles_total_;
  metrics::CounterFamily& not_stored_;
  metrics::Histogram& compile_seconds_;
  metrics::Gauge& entries_;
  metrics::Gauge& stored_bytes_;
  metrics::Gauge& evictions_;
  metrics::Gauge& quarantined_;
  metrics::CounterFamily& device_seconds_;
  metrics::GaugeFamily& pool_busy_;
  metrics::GaugeFamily& pool_queue_depth_;
  metrics::GaugeFamily& pool_utilization_;
  metrics::CounterFamily& executions_ended_;
  metrics::Gauge& host_memory_budget_;
  metrics::Gauge& host_memory_in_use_;
  metrics::Gauge& host_memory_waiting_;
  metrics::GaugeFamily& tune_jobs_;
  metrics::CounterFamily& tune_jobs_ended_;
  metrics::Counter& tune_dropped_;
  metrics::Counter& tune_trials_;
  metrics::Counter& tune_saved_seconds_;
  metrics::Counter& tune_fleet_skipped_;
  metrics::Counter& tune_fleet_takeovers_;
  metrics::GaugeFamily& tuning_records_;
  std::mutex tenants_mu_;
  std::set<std::string> record_tenants_;  // tenants given a tuning_records series; guarded by tenants_mu_

  std::atomic<int64_t> compile_requests_{0};
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> misses_{0};
  std::atomic<int64_t> joined_{0};
  std::atomic<int64_t> fast_path_{0};
  std::atomic<int64_t> compile_errors_{0};
  std::atomic<double> compile_ms_total_{0};
  std::atomic<double> compile_ms_saved_{0};
  std::atomic<int64_t> execute_requests_{0};
  std::atomic<int64_t> execute_errors_{0};
  std::atomic<double> device_us_total_{0};
};

}  // namespace kiln::service
