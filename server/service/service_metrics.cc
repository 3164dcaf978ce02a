#include "server/service/service_metrics.h"

namespace kiln::service {

std::string_view CacheOutcomeName(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::kHit:
      return "hit";
    case CacheOutcome::kMiss:
      return "miss";
    case CacheOutcome::kJoined:
      return "joined";
  }
  return "unknown";
}

ServiceMetrics::ServiceMetrics()
    : lookups_(registry_.AddCounter("kiln_cache_lookups_total",
                                    "Compile requests by how the cache answered them.", {"result"})),
      fast_path_total_(registry_.AddCounter("kiln_cache_fast_path_total",
                                            "Compile requests answered without parsing (raw-body fast path).")
                           .WithLabels({})),
      saved_seconds_(registry_.AddCounter("kiln_compile_seconds_saved_total",
                                          "Compile seconds saved by hits (the entries' own compile times).")
                         .WithLabels({})),
      compile_errors_total_(registry_.AddCounter("kiln_compile_errors_total",
                                                 "Compile requests that failed (bad HLO, unsupported ops).")
                                .WithLabels({})),
      recompiles_total_(registry_.AddCounter("kiln_recompiles_total",
                                             "Compiles of a module name already compiled as another program (same "
                                             "tenant and chip); GET /v1/recompiles says what changed.")
                            .WithLabels({})),
      not_stored_(registry_.AddCounter("kiln_cache_not_stored_total",
                                       "Compiles answered but not stored, by why (disk full, read-only store, database locked).",
                                       {"problem"})),
      compile_seconds_(registry_.AddHistogram("kiln_compile_duration_seconds", "Time to compile one executable.")
                           .WithLabels({})),
      entries_(registry_.AddGauge("kiln_cache_entries", "Entries in the store (all tenants).").WithLabels({})),
      stored_bytes_(registry_.AddGauge("kiln_cache_stored_bytes", "Compressed bytes in the store.").WithLabels({})),
      evictions_(registry_.AddGauge("kiln_cache_evictions_total", "Entries evicted over the store's life.")
                     .WithLabels({})),
      quarantined_(registry_.AddGauge("kiln_cache_quarantined_total",
                                      "Entries quarantined over the store's life (failed checksum).")
                       .WithLabels({})),
      device_seconds_(registry_.AddCounter("kiln_execute_device_seconds_total",
                                           "Simulated device seconds of executions.", {"kind"})),
      pool_busy_(registry_.AddGauge("kiln_pool_busy_chips", "Chips running a job.", {"kind"})),
      pool_queue_depth_(registry_.AddGauge("kiln_pool_queue_depth", "Runs waiting for a chip.", {"kind"})),
      pool_utilization_(registry_.AddGauge("kiln_pool_utilization",
                                           "Mean fraction of time the kind's chips were busy.", {"kind"})),
      executions_ended_(registry_.AddCounter("kiln_execute_ended_total",
                                             "Runs that ended without a result, by how.", {"reason"})),
      host_memory_budget_(registry_.AddGauge("kiln_host_memory_budget_bytes",
                                             "Host memory the runs may hold together (0: no budget).")
                              .WithLabels({})),
      host_memory_in_use_(registry_.AddGauge("kiln_host_memory_in_use_bytes",
                                             "Host memory held by running runs (their estimates).")
                              .WithLabels({})),
      host_memory_waiting_(registry_.AddGauge("kiln_host_memory_waiting_runs",
                                              "Queued runs that do not fit the free host memory.")
                               .WithLabels({})),
      tune_jobs_(registry_.AddGauge("kiln_tune_jobs", "Autotuning jobs queued or running now.", {"state"})),
      tune_jobs_ended_(registry_.AddCounter("kiln_tune_jobs_ended_total",
                                          "Autotuning jobs ended since the server started, by how (done, failed, "
                                          "cancelled); not those left to another server of the fleet "
                                          "(kiln_tune_fleet_skipped_total).",
                                          {"state"})),
      tune_dropped_(registry_.AddCounter("kiln_tune_background_dropped_total",
                                       "Background tunings of compile misses not queued: the tuning queue was full.")
                        .WithLabels({})),
      tune_trials_(registry_.AddCounter("kiln_tune_trials_total", "Candidate programs measured by ended tuning jobs.")
                       .WithLabels({})),
      tune_saved_seconds_(registry_.AddCounter("kiln_tune_device_seconds_saved_total",
                                             "Device seconds each run of the tuned programs saves, summed over the "
                                             "tunings stored (heuristic_us - tuned_us).")
                              .WithLabels({})),
      tune_fleet_skipped_(registry_.AddCounter("kiln_tune_fleet_skipped_total",
                                             "Tuning jobs not run here because another server of the fleet runs "
                                             "or ran the entry's tuning (requests answered with its job, background "
                                             "and queued jobs skipped).")
                              .WithLabels({})),
      tune_fleet_takeovers_(registry_.AddCounter("kiln_tune_fleet_takeovers_total",
                                               "Tuning jobs taken over from a server of the fleet that went away "
                                               "(its lease lapsed with no finished marker).")
                                .WithLabels({})),
      tuning_records_(registry_.AddGauge("kiln_tuning_records", "Tuning records in the store, by tenant.",
                                         {"tenant"})) {
  // Looked up once: answering a compile then costs only atomic adds.
  for (CacheOutcome outcome : {CacheOutcome::kHit, CacheOutcome::kMiss, CacheOutcome::kJoined}) {
    lookups_by_outcome_[static_cast<int>(outcome)] = &lookups_.WithLabels({std::string(CacheOutcomeName(outcome))});
  }
}

void ServiceMetrics::CompileAnswered(CacheOutcome outcome, bool fast_path, double entry_compile_ms) {
  lookups_by_outcome_[static_cast<int>(outcome)]->Increment();
  switch (outcome) {
    case CacheOutcome::kHit:
      hits_.fetch_add(1, std::memory_order_relaxed);
      compile_ms_saved_.fetch_add(entry_compile_ms, std::memory_order_relaxed);
      saved_seconds_.Increment(entry_compile_ms / 1000);
      break;
    case CacheOutcome::kMiss:
      misses_.fetch_add(1, std::memory_order_relaxed);
      break;
    case CacheOutcome::kJoined:
      joined_.fetch_add(1, std::memory_order_relaxed);
      break;
  }
  if (fast_path) {
    fast_path_.fetch_add(1, std::memory_order_relaxed);
    fast_path_total_.Increment();
  }
}

void ServiceMetrics::NotStored(cache::StorageProblem problem) {
  not_stored_.WithLabels({std::string(cache::StorageProblemName(problem))}).Increment();
}

void ServiceMetrics::Compiled(double compile_ms) {
  compile_ms_total_.fetch_add(compile_ms, std::memory_order_relaxed);
  compile_seconds_.Observe(compile_ms / 1000);
}

void ServiceMetrics::Executed(std::string_view kind, double device_seconds) {
  device_us_total_.fetch_add(device_seconds * 1e6, std::memory_order_relaxed);
  device_seconds_.WithLabels({std::string(kind)}).Increment(device_seconds);
}

void ServiceMetrics::SetStoreFigures(int64_t entries, uint64_t stored_bytes, int64_t evicted_total,
                                     int64_t quarantined_total) {
  entries_.Set(static_cast<double>(entries));
  stored_bytes_.Set(static_cast<double>(stored_bytes));
  evictions_.Set(static_cast<double>(evicted_total));
  quarantined_.Set(static_cast<double>(quarantined_total));
}

void ServiceMetrics::SetPoolKind(std::string_view kind, int busy, size_t queue_depth, double utilization) {
  pool_busy_.WithLabels({std::string(kind)}).Set(busy);
  pool_queue_depth_.WithLabels({std::string(kind)}).Set(static_cast<double>(queue_depth));
  pool_utilization_.WithLabels({std::string(kind)}).Set(utilization);
}

void ServiceMetrics::SetHostMemory(uint64_t budget_bytes, uint64_t in_use_bytes, size_t waiting_runs) {
  host_memory_budget_.Set(static_cast<double>(budget_bytes));
  host_memory_in_use_.Set(static_cast<double>(in_use_bytes));
  host_memory_waiting_.Set(static_cast<double>(waiting_runs));
}

void ServiceMetrics::SetTuneFigures(const TuneCounts& counts, const std::map<std::string, int64_t>& records_by_tenant) {
  tune_jobs_.WithLabels({"queued"}).Set(static_cast<double>(counts.queued));
  tune_jobs_.WithLabels({"running"}).Set(static_cast<double>(counts.running));
  // The job registry's totals only grow: the counters catch up to them
  // (under the lock, so two scrapes at once add each difference once).
  std::lock_guard lock(tenants_mu_);
  auto catch_up = [](metrics::Counter& counter, double total) {
    if (total > counter.value()) counter.Increment(total - counter.value());
  };
  catch_up(tune_jobs_ended_.WithLabels({"done"}), static_cast<double>(counts.done));
  catch_up(tune_jobs_ended_.WithLabels({"failed"}), static_cast<double>(counts.failed));
  catch_up(tune_jobs_ended_.WithLabels({"cancelled"}), static_cast<double>(counts.cancelled));
  catch_up(tune_dropped_, static_cast<double>(counts.dropped));
  catch_up(tune_trials_, static_cast<double>(counts.trials));
  catch_up(tune_saved_seconds_, counts.saved_us * 1e-6);
  catch_up(tune_fleet_skipped_, static_cast<double>(counts.fleet_skipped));
  catch_up(tune_fleet_takeovers_, static_cast<double>(counts.fleet_takeovers));
  // A tenant whose records were all deleted reads 0, not its last count.
  for (const std::string& tenant : record_tenants_) {
    if (!records_by_tenant.contains(tenant)) tuning_records_.WithLabels({tenant}).Set(0);
  }
  for (const auto& [tenant, count] : records_by_tenant) {
    tuning_records_.WithLabels({tenant}).Set(static_cast<double>(count));
    record_tenants_.insert(tenant);
  }
}

CompileCounters ServiceMetrics::compile_counters() const {
  return CompileCounters{
      .requests = compile_requests_.load(std::memory_order_relaxed),
      .hits = hits_.load(std::memory_order_relaxed),
      .misses = misses_.load(std::memory_order_relaxed),
      .joined = joined_.load(std::memory_order_relaxed),
      .fast_path = fast_path_.load(std::memory_order_relaxed),
      .errors = compile_errors_.load(std::memory_order_relaxed),
      .compile_ms_total = compile_ms_total_.load(std::memory_order_relaxed),
      .compile_ms_saved = compile_ms_saved_.load(std::memory_order_relaxed),
  };
}

ExecuteCounters ServiceMetrics::execute_counters() const {
  return ExecuteCounters{
      .requests = execute_requests_.load(std::memory_order_relaxed),
      .errors = execute_errors_.load(std::memory_order_relaxed),
      .device_us_total = device_us_total_.load(std::memory_order_relaxed),
  };
}

}  // namespace kiln::service
