// CacheStore: tuning records.
#include "cache/cache_store.h"

namespace kiln::cache {
namespace {

#define KILN_TUNING_RECORD_COLUMNS \
  "id, tenant, workload_key, chip, compiler_version, plan, measured_seconds, error, created_ms"

TuningRecord RecordFromRow(const Statement& row) {
  TuningRecord record;
  record.id = row.ColumnInt(0);
  record.tenant = row.ColumnText(1);
  record.workload_key = row.ColumnText(2);
  record.chip = row.ColumnText(3);
  record.compiler_version = static_cast<uint32_t>(row.ColumnInt(4));
  record.plan = row.ColumnText(5);
  if (!row.ColumnIsNull(6)) record.measured_seconds = row.ColumnDouble(6);
  if (!row.ColumnIsNull(7)) record.error = std::string(row.ColumnText(7));
  record.created_ms = row.ColumnInt(8);
  return record;
}

Status ValidateRecord(const TuningRecord& record) {
  if (record.tenant.empty()) return InvalidArgumentError("cache: a tuning record needs a tenant");
  if (record.workload_key.empty() || record.chip.empty()) {
    return InvalidArgumentError("cache: a tuning record needs a workload key and a chip");
  }
  if (record.measured_seconds.has_value() == record.error.has_value()) {
    return InvalidArgumentError("cache: a tuning record has either a measured time or an error");
  }
  return Ok();
}

}  // namespace

Status CacheStore::AddTuningRecord(TuningRecord record) {
  KILN_RETURN_IF_ERROR(ValidateRecord(record));
  if (read_only_) return ReadOnlyError();
  if (record.created_ms == 0) record.created_ms = Now();
  std::lock_guard lock(writer_mutex_);
  writer_->ClearLastFailure();
  auto insert = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(Statement insert,
                          writer_->Prepare("INSERT INTO tuning_records (tenant, workload_key, chip, compiler_version, "
                                           "plan, measured_seconds, error, created_ms) "
                                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    insert.BindText(1, record.tenant).BindText(2, record.workload_key).BindText(3, record.chip);
    insert.Bind(4, static_cast<int64_t>(record.compiler_version)).BindText(5, record.plan);
    record.measured_seconds ? insert.Bind(6, *record.measured_seconds) : insert.BindNull(6);
    record.error ? insert.BindText(7, *record.error) : insert.BindNull(7);
    return insert.Bind(8, record.created_ms).Run();
  };
  if (Status inserted = insert(); !inserted) return WriteFailureLocked(inserted.error());
  WriteSucceededLocked();
  return Ok();
}

Result<std::vector<TuningRecord>> CacheStore::TuningRecords(const TuningRecordFilter& filter) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT " KILN_TUNING_RECORD_COLUMNS " FROM tuning_records "
                                        "WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR workload_key = ?2) "
                                        "AND (?3 IS NULL OR chip = ?3) AND (?4 IS NULL OR compiler_version = ?4) "
                                        "ORDER BY created_ms DESC, id DESC LIMIT ?5"));
  filter.tenant ? select.BindText(1, *filter.tenant) : select.BindNull(1);
  filter.workload_key ? select.BindText(2, *filter.workload_key) : select.BindNull(2);
  filter.chip ? select.BindText(3, *filter.chip) : select.BindNull(3);
  filter.compiler_version ? select.Bind(4, static_cast<int64_t>(*filter.compiler_version)) : select.BindNull(4);
  select.Bind(5, int64_t{filter.limit});
  std::vector<TuningRecord> records;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    records.push_back(RecordFromRow(select));
  }
  return records;
}

Result<std::optional<TuningRecord>> CacheStore::BestTuningRecord(const std::string& tenant,
                                                                 const std::string& workload_key,
                                                                 const std::string& chip) {
  if (tenant.empty()) return InvalidArgumentError("cache: a tuning record lookup needs a tenant");
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT " KILN_TUNING_RECORD_COLUMNS " FROM tuning_records "
                                        "WHERE tenant = ?1 AND workload_key = ?2 AND chip = ?3 "
                                        "AND compiler_version = ?4 AND error IS NULL AND measured_seconds IS NOT NULL "
                                        "ORDER BY measured_seconds, id LIMIT 1"));
  select.BindText(1, tenant).BindText(2, workload_key).BindText(3, chip);
  KILN_ASSIGN_OR_RETURN(bool found, select.Bind(4, int64_t{kCompilerFormatVersion}).Step());
  if (!found) return std::nullopt;
  return RecordFromRow(select);
}

Result<std::map<std::string, int64_t>> CacheStore::TuningRecordCounts() {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT tenant, count(*) FROM tuning_records GROUP BY tenant"));
  std::map<std::string, int64_t> counts;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    counts.emplace(select.ColumnText(0), select.ColumnInt(1));
  }
  return counts;
}

Result<int64_t> CacheStore::DeleteTuningRecords(const std::string& tenant) {
  if (read_only_) return ReadOnlyError();
  std::lock_guard lock(writer_mutex_);
  Result<int64_t> deleted = DeleteWithReserveLocked([&]() -> Result<int64_t> {
    KILN_ASSIGN_OR_RETURN(Statement erase, writer_->Prepare("DELETE FROM tuning_records WHERE tenant = ?1"));
    KILN_RETURN_IF_ERROR(erase.BindText(1, tenant).Run());
    return writer_->Changes();
  });
  if (!deleted) return WriteFailureLocked(deleted.error());
  WriteSucceededLocked();
  return deleted;
}

}  // namespace kiln::cache
