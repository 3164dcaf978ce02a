#include "server/service/tune_records.h"

namespace kiln::service {

Status StoreRecords::Add(const autotune::TuningTrial& trial) {
  cache::TuningRecord record;
  record.tenant = tenant_;
  record.workload_key = trial.workload_key;
  record.chip = trial.chip;
  record.plan = trial.plan;
  if (trial.measured_us) record.measured_seconds = *trial.measured_us * 1e-6;
  record.error = trial.error;
  KILN_RETURN_IF_ERROR(store_.tuning_records().Add(std::move(record)));
  ++added_;
  return Ok();
}

Result<std::optional<autotune::TuningTrial>> StoreRecords::Best(const std::string& workload_key,
                                                                const std::string& chip) {
  KILN_ASSIGN_OR_RETURN(std::optional<cache::TuningRecord> best, store_.tuning_records().Best(tenant_, workload_key, chip));
  if (!best) return std::optional<autotune::TuningTrial>();
  autotune::TuningTrial trial;
  trial.workload_key = best->workload_key;
  trial.chip = best->chip;
  trial.plan = best->plan;
  if (best->measured_seconds) trial.measured_us = *best->measured_seconds * 1e6;
  trial.error = best->error;
  return std::optional<autotune::TuningTrial>(std::move(trial));
}

}  // namespace kiln::service
