// CacheStore: export to and import from bundles (bundle.h).
#include <algorithm>
#include <limits>

#include "cache/bundle_reader.h"
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
      // A damaged text is only a lost explanation: the entry goes without.
      if (Result<std::optional<std::string>> source = Source(listed.id); source && *source) {
        entry.source_text = std::move(**source);
      }
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

Result<CacheStore::PreparedEntry> CacheStore::PrepareImported(const BundleEntry& entry, const ImportOptions& options) {
  PreparedEntry prepared;
  prepared.entry = std::make_shared<HotEntry>();
  EntryMetadata& metadata = prepared.entry->metadata;
  metadata = entry.metadata;
  if (options.tenant) metadata.id.tenant = *options.tenant;
  KILN_RETURN_IF_ERROR(ValidateName("tenant", metadata.id.tenant));
  metadata.row_id = 0;
  metadata.hit_count = 0;
  metadata.quarantined = false;
  metadata.last_hit_ms = metadata.created_ms;
  metadata.raw_bytes = entry.executable.size();
  // A bundle's frame is a plain zstd frame of these very bytes (checked
  // when it was read): kept as it is, without a second compression.
  if (!entry.frame.empty()) {
    prepared.frame = entry.frame;
  } else {
    KILN_ASSIGN_OR_RETURN(prepared.frame, ZstdCompress(entry.executable, options_.zstd_level, nullptr));
  }
  metadata.stored_bytes = prepared.frame.size();
  metadata.dictionary_id = 0;
  if (!entry.source_text.empty() && entry.source_text.size() <= kMaxSourceBytes) {
    KILN_ASSIGN_OR_RETURN(prepared.source_frame, ZstdCompress(entry.source_text, options_.zstd_level, nullptr));
  }
  return prepared;
}

Status CacheStore::ImportBatch(std::span<const BundleEntry> entries, std::span<const TuningRecord> records,
                               const ImportOptions& options, BundleReport& report) {
  if (read_only_) return ReadOnlyError();
  // Compressing (when a frame must be made) happens outside the writer lock.
  std::vector<PreparedEntry> prepared;
  prepared.reserve(entries.size());
  for (const BundleEntry& entry : entries) {
    KILN_ASSIGN_OR_RETURN(PreparedEntry one, PrepareImported(entry, options));
    prepared.push_back(std::move(one));
  }
  BundleReport batch;
  std::lock_guard lock(writer_mutex_);
  (void)FlushHitStatsLocked();  // advisory
  writer_->ClearLastFailure();
  uint64_t added_bytes = 0;
  auto write = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*writer_));
    KILN_ASSIGN_OR_RETURN(Statement existing,
                          writer_->Prepare("SELECT checksum, quarantined FROM entries WHERE tenant = ?1 AND key = ?2 "
                                           "AND chip = ?3 AND format_version = ?4"));
    for (size_t i = 0; i < prepared.size(); ++i) {
      const EntryMetadata& metadata = prepared[i].entry->metadata;
      const EntryId& id = metadata.id;
      existing.BindText(1, id.tenant).BindText(2, id.key.Hex()).BindText(3, id.chip);
      existing.Bind(4, static_cast<int64_t>(id.format_version));
      KILN_ASSIGN_OR_RETURN(bool found, existing.Step());
      const bool present = found && existing.ColumnInt(1) == 0;
      const bool same = present && ChecksumFromSql(existing.ColumnInt(0)) == metadata.checksum;
      existing.Reset();
      if (present) {
        ++(same ? batch.entries_present : batch.conflicts);
        continue;
      }
      // No request-body mapping: a bundle's own are never trusted
      // (bundle.h), so the first request for a body parses it.
      const PutRequest request{.id = id,
                               .options = metadata.options,
                               .plan_kind = metadata.plan_kind,
                               .executable = entries[i].executable,
                               .compile_seconds = metadata.compile_seconds,
                               .device_seconds = metadata.device_seconds,
                               .tune_seconds = metadata.tune_seconds,
                               .components = entries[i].components,
                               .source_text = entries[i].source_text};
      KILN_RETURN_IF_ERROR(WriteEntryRowsLocked(request, prepared[i], /*keep_components=*/false));
      added_bytes += metadata.stored_bytes;
      ++batch.entries;
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
    for (const TuningRecord& record : records) {
      const std::string& tenant = options.tenant ? *options.tenant : record.tenant;
      for (Statement* s : {&same_record, &insert}) {
        s->BindText(1, tenant).BindText(2, record.workload_key).BindText(3, record.chip);
        s->Bind(4, static_cast<int64_t>(record.compiler_version)).BindText(5, record.plan);
        record.measured_seconds ? s->Bind(6, *record.measured_seconds) : s->BindNull(6);
        record.error ? s->BindText(7, *record.error) : s->BindNull(7);
        s->Bind(8, record.created_ms);
      }
      KILN_ASSIGN_OR_RETURN(bool found, same_record.Step());
      same_record.Reset();
      if (found) {
        ++batch.records_present;
        continue;
      }
      KILN_RETURN_IF_ERROR(insert.Run());
      ++batch.records;
    }
    return transaction.Commit();
  };
  if (Status written = write(); !written) return WriteFailureLocked(written.error());
  WriteSucceededLocked();
  report.entries += batch.entries;
  report.entries_present += batch.entries_present;
  report.conflicts += batch.conflicts;
  report.records += batch.records;
  report.records_present += batch.records_present;
  approx_stored_bytes_ += added_bytes;
  if (options_.max_bytes > 0 && approx_stored_bytes_ > options_.max_bytes) (void)EvictToBudgetLocked();
  return Ok();
}

Result<BundleReport> CacheStore::ImportBundle(const Bundle& bundle, const ImportOptions& options) {
  BundleReport report;
  KILN_RETURN_IF_ERROR(ImportBatch(bundle.entries, bundle.records, options, report));
  return report;
}

Result<BundleReport> CacheStore::ImportBundle(BundleReader& reader, const ImportOptions& options) {
  BundleReport report;
  std::vector<BundleEntry> entries;
  std::vector<TuningRecord> records;
  uint64_t batch_bytes = 0;
  auto flush = [&]() -> Status {
    KILN_RETURN_IF_ERROR(ImportBatch(entries, records, options, report));
    entries.clear();
    records.clear();
    batch_bytes = 0;
    return Ok();
  };
  for (;;) {
    Result<std::optional<BundleReader::Item>> item = reader.Next();
    if (!item) {
      return item.error().WithContext("after importing " + std::to_string(report.entries) + " entries and " +
                                      std::to_string(report.records) + " tuning records");
    }
    if (!*item) break;
    if (auto* entry = std::get_if<BundleEntry>(&**item)) {
      batch_bytes += entry->executable.size() + entry->frame.size();
      entries.push_back(std::move(*entry));
    } else {
      batch_bytes += 256;
      records.push_back(std::get<TuningRecord>(std::move(**item)));
    }
    if (batch_bytes >= options.batch_bytes) KILN_RETURN_IF_ERROR(flush());
  }
  KILN_RETURN_IF_ERROR(flush());
  return report;
}

}  // namespace kiln::cache
