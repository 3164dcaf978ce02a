// CacheStore: tuning records.
#include "cache/cache_store.h"

namespace kiln::cache {
namespace {

TuningRecord RecordFromRow(const Statement& row) {
  TuningRecord record;
  record.workload_key = row.ColumnText(0);
  record.chip = row.ColumnText(1);
  record.plan = row.ColumnText(2);
  if (!row.ColumnIsNull(3)) record.measured_seconds = row.ColumnDouble(3);
  if (!row.ColumnIsNull(4)) record.error = std::string(row.ColumnText(4));
  record.created_ms = row.ColumnInt(5);
  return record;
}

}  // namespace

Status CacheStore::AddTuningRecord(TuningRecord record) {
  if (record.workload_key.empty() || record.chip.empty()) {
    return InvalidArgumentError("cache: a tuning record needs a workload key and a chip");
  }
  if (record.measured_seconds.has_value() == record.error.has_value()) {
    return InvalidArgumentError("cache: a tuning record has either a measured time or an error");
  }
  if (record.created_ms == 0) record.created_ms = Now();
  std::lock_guard lock(writer_mutex_);
  KILN_ASSIGN_OR_RETURN(Statement insert,
                        writer_->Prepare("INSERT INTO tuning_records (workload_key, chip, plan, measured_seconds, "
                                         "error, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  insert.BindText(1, record.workload_key).BindText(2, record.chip).BindText(3, record.plan);
  record.measured_seconds ? insert.Bind(4, *record.measured_seconds) : insert.BindNull(4);
  record.error ? insert.BindText(5, *record.error) : insert.BindNull(5);
  return insert.Bind(6, record.created_ms).Run();
}

Result<std::vector<TuningRecord>> CacheStore::TuningRecords(const std::string& workload_key,
                                                            const std::string& chip) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT workload_key, chip, plan, measured_seconds, error, created_ms "
                                        "FROM tuning_records WHERE workload_key = ?1 AND chip = ?2 "
                                        "ORDER BY created_ms DESC, id DESC"));
  select.BindText(1, workload_key).BindText(2, chip);
  std::vector<TuningRecord> records;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    records.push_back(RecordFromRow(select));
  }
  return records;
}

Result<std::optional<TuningRecord>> CacheStore::BestTuningRecord(const std::string& workload_key,
                                                                 const std::string& chip) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT workload_key, chip, plan, measured_seconds, error, created_ms "
                                        "FROM tuning_records WHERE workload_key = ?1 AND chip = ?2 "
                                        "AND error IS NULL AND measured_seconds IS NOT NULL "
                                        "ORDER BY measured_seconds, id LIMIT 1"));
  KILN_ASSIGN_OR_RETURN(bool found, select.BindText(1, workload_key).BindText(2, chip).Step());
  if (!found) return std::nullopt;
  return RecordFromRow(select);
}

}  // namespace kiln::cache
