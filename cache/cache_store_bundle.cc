// CacheStore: export to and import from bundles (bundle.h).
#include <algorithm>
#include <limits>

#include "cache/cache_store.h"
#include "cache/store_rows.h"

namespace kiln::cache {
namespace {

constexpr int kExportPage = 500;

bool Selected(const BundleSelection& selection, const EntryMetadata& m) {
  if (m.quarantined || m.created_ms < selection.since_ms) return false;
  if (m.id.format_version != kCompilerFormatVersion) return false;
  return selection.keys.empty() ||
         std::find(selection.keys.begin(), selection.keys.end(), m.id.key) != selection.keys.end();
}

}  // namespace

Result<Bundle> CacheStore::ExportBundle(const BundleSelection& selection, BundleReport& report) {
  Bundle bundle;
  bundle.schema_version = CurrentSchemaVersion();
  BundleSink collect{.entry = [&](const BundleEntry& entry) -> Status {
                       bundle.entries.push_back(entry);
                       return Ok();
                     },
                     .record = [&](const TuningRecord& record) -> Status {
                       bundle.records.push_back(record);
                       return Ok();
                     }};
  KILN_RETURN_IF_ERROR(ExportBundle(selection, collect, report));
  return bundle;
}

Status CacheStore::ExportBundle(const BundleSelection& selection, const BundleSink& sink, BundleReport& report) {
  report = {};
  ListFilter filter{.tenant = selection.tenant, .chip = selection.chip, .limit = kExportPage};
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::vector<EntryMetadata> page, List(filter));
    if (page.empty()) break;
    filter.after_row_id = page.back().row_id;
    for (const EntryMetadata& listed : page) {
      if (!Selected(selection, listed)) continue;
      KILN_ASSIGN_OR_RETURN(std::shared_ptr<const HotEntry> read, ReadVerified(listed.id));
      if (read == nullptr) {  // corrupt (now quarantined) or evicted meanwhile
        ++report.skipped_corrupt;
        continue;
      }
      BundleEntry entry;
      entry.metadata = read->metadata;
      entry.executable = read->executable;
      KILN_ASSIGN_OR_RETURN(entry.components, Components(listed.id));
      {  // the lease is returned before the sink runs
        KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
        KILN_ASSIGN_OR_RETURN(Statement requests,
                              reader->Prepare("SELECT request_hash FROM request_keys WHERE tenant = ?1 AND key = ?2 "
                                              "AND chip = ?3 AND format_version = ?4 ORDER BY request_hash"));
        requests.BindText(1, listed.id.tenant).BindText(2, listed.id.key.Hex()).BindText(3, listed.id.chip);
        requests.Bind(4, static_cast<int64_t>(listed.id.format_version));
        while (true) {
          KILN_ASSIGN_OR_RETURN(bool row, requests.Step());
          if (!row) break;
          KILN_ASSIGN_OR_RETURN(Hash128 hash, ParseHash128(requests.ColumnText(0)));
          entry.request_hashes.push_back(hash);
        }
      }
      KILN_RETURN_IF_ERROR(sink.entry(entry));
      ++report.entries;
    }
  }
  TuningRecordFilter records{.tenant = selection.tenant, .chip = selection.chip,
                             .limit = std::numeric_limits<int>::max()};
  KILN_ASSIGN_OR_RETURN(std::vector<TuningRecord> all, TuningRecords(records));
  // Oldest first, so an import adds them in the order they were measured.
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->created_ms < selection.since_ms) continue;
    KILN_RETURN_IF_ERROR(sink.record(*it));
    ++report.records;
  }
  return Ok();
}

Result<BundleReport> CacheStore::ImportBundle(const Bundle& bundle) {
  if (read_only_) return ReadOnlyError();
  // Compress outside the writer lock (the slow part); entries found present
  // below are compressed for nothing, which an import can afford.
  std::vector<PreparedEntry> prepared;
  std::vector<PutRequest> requests;
  prepared.reserve(bundle.entries.size());
  requests.reserve(bundle.entries.size());
  for (const BundleEntry& entry : bundle.entries) {
    PutRequest request{.id = entry.metadata.id,
                       .options = entry.metadata.options,
                       .plan_kind = entry.metadata.plan_kind,
                       .executable = entry.executable,
                       .compile_seconds = entry.metadata.compile_seconds,
                       .device_seconds = entry.metadata.device_seconds,
                       .components = entry.components};
    KILN_ASSIGN_OR_RETURN(PreparedEntry one, PrepareEntry(request));
    one.entry->metadata.created_ms = one.entry->metadata.last_hit_ms = entry.metadata.created_ms;
    prepared.push_back(std::move(one));
    requests.push_back(std::move(request));
  }
  BundleReport report;
  std::lock_guard lock(writer_mutex_);
  (void)FlushHitStatsLocked();  // advisory
  writer_->ClearLastFailure();
  uint64_t added_bytes = 0;
  auto write = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*writer_));
    KILN_ASSIGN_OR_RETURN(Statement existing,
                          writer_->Prepare("SELECT checksum, quarantined FROM entries WHERE tenant = ?1 AND key = ?2 "
                                           "AND chip = ?3 AND format_version = ?4"));
    for (size_t i = 0; i < requests.size(); ++i) {
      const PutRequest& request = requests[i];
      const EntryMetadata& metadata = prepared[i].entry->metadata;
      existing.BindText(1, request.id.tenant).BindText(2, request.id.key.Hex()).BindText(3, request.id.chip);
      existing.Bind(4, static_cast<int64_t>(request.id.format_version));
      KILN_ASSIGN_OR_RETURN(bool found, existing.Step());
      const bool present = found && existing.ColumnInt(1) == 0;
      const bool same = present && ChecksumFromSql(existing.ColumnInt(0)) == metadata.checksum;
      existing.Reset();
      if (present) {
        ++(same ? report.entries_present : report.conflicts);
        continue;
      }
      KILN_RETURN_IF_ERROR(WriteEntryRowsLocked(request, prepared[i], /*keep_components=*/false));
      for (const Hash128& hash : bundle.entries[i].request_hashes) {
        PutRequest mapping = request;
        mapping.request_hash = hash;
        KILN_RETURN_IF_ERROR(WriteRequestKeyLocked(mapping));
      }
      added_bytes += metadata.stored_bytes;
      ++report.entries;
    }
    KILN_ASSIGN_OR_RETURN(
        Statement same_record,
        writer_->Prepare("SELECT 1 FROM tuning_records WHERE tenant = ?1 AND workload_key = ?2 AND chip = ?3 "
                         "AND compiler_version = ?4 AND plan = ?5 AND measured_seconds IS ?6 AND error IS ?7 "
                         "AND created_ms = ?8"));
    KILN_ASSIGN_OR_RETURN(Statement insert,
                          writer_->Prepare("INSERT INTO tuning_records (tenant, workload_key, chip, compiler_version, "
                                           "plan, measured_seconds, error, created_ms) "
                                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    for (const TuningRecord& record : bundle.records) {
      for (Statement* s : {&same_record, &insert}) {
        s->BindText(1, record.tenant).BindText(2, record.workload_key).BindText(3, record.chip);
        s->Bind(4, static_cast<int64_t>(record.compiler_version)).BindText(5, record.plan);
        record.measured_seconds ? s->Bind(6, *record.measured_seconds) : s->BindNull(6);
        record.error ? s->BindText(7, *record.error) : s->BindNull(7);
        s->Bind(8, record.created_ms);
      }
      KILN_ASSIGN_OR_RETURN(bool found, same_record.Step());
      same_record.Reset();
      if (found) {
        ++report.records_present;
        continue;
      }
      KILN_RETURN_IF_ERROR(insert.Run());
      ++report.records;
    }
    return transaction.Commit();
  };
  if (Status written = write(); !written) return WriteFailureLocked(written.error());
  WriteSucceededLocked();
  approx_stored_bytes_ += added_bytes;
  if (options_.max_bytes > 0 && approx_stored_bytes_ > options_.max_bytes) (void)EvictToBudgetLocked();
  return report;
}

}  // namespace kiln::cache
