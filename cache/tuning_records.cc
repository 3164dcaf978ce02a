#include "cache/tuning_records.h"

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

// The insert of a record (one SQL text, so one prepared statement).
constexpr char kInsertRecord[] =
    "INSERT INTO tuning_records (tenant, workload_key, chip, compiler_version, plan, measured_seconds, error, "
    "created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

void BindRecord(Statement& statement, const TuningRecord& record, const std::string& tenant) {
  statement.BindText(1, tenant).BindText(2, record.workload_key).BindText(3, record.chip);
  statement.Bind(4, static_cast<int64_t>(record.compiler_version)).BindText(5, record.plan);
  record.measured_seconds ? statement.Bind(6, *record.measured_seconds) : statement.BindNull(6);
  record.error ? statement.BindText(7, *record.error) : statement.BindNull(7);
  statement.Bind(8, record.created_ms);
}

}  // namespace

Status TuningRecords::Add(TuningRecord record) {
  KILN_RETURN_IF_ERROR(ValidateRecord(record));
  if (record.created_ms == 0) record.created_ms = clock_();
  return writer_.Write([&](Connection& writer) -> Status {
    KILN_ASSIGN_OR_RETURN(Statement insert, writer.Prepare(kInsertRecord));
    BindRecord(insert, record, record.tenant);
    return insert.Run();
  });
}

Result<bool> TuningRecords::AddUnlessPresent(Connection& writer, const TuningRecord& record,
                                             const std::string& tenant) {
  KILN_ASSIGN_OR_RETURN(
      Statement same,
      writer.Prepare("SELECT 1 FROM tuning_records WHERE tenant = ?1 AND workload_key = ?2 AND chip = ?3 "
                     "AND compiler_version = ?4 AND plan = ?5 AND measured_seconds IS ?6 AND error IS ?7 "
                     "AND created_ms = ?8"));
  BindRecord(same, record, tenant);
  KILN_ASSIGN_OR_RETURN(bool found, same.Step());
  if (found) return false;
  KILN_ASSIGN_OR_RETURN(Statement insert, writer.Prepare(kInsertRecord));
  BindRecord(insert, record, tenant);
  KILN_RETURN_IF_ERROR(insert.Run());
  return true;
}

Result<std::vector<TuningRecord>> TuningRecords::List(const TuningRecordFilter& filter) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_.Acquire());
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

Result<std::optional<TuningRecord>> TuningRecords::Best(const std::string& tenant, const std::string& workload_key,
                                                      const std::string& chip) {
  if (tenant.empty()) return InvalidArgumentError("cache: a tuning record lookup needs a tenant");
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_.Acquire());
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

Result<std::map<std::string, int64_t>> TuningRecords::CountsByTenant() {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_.Acquire());
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

Result<int64_t> TuningRecords::DeleteTenant(const std::string& tenant) {
  return writer_.Delete([&](Connection& writer) -> Result<int64_t> {
    KILN_ASSIGN_OR_RETURN(Statement erase, writer.Prepare("DELETE FROM tuning_records WHERE tenant = ?1"));
    KILN_RETURN_IF_ERROR(erase.BindText(1, tenant).Run());
    return writer.Changes();
  });
}

}  // namespace kiln::cache
