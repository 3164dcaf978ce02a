#include "cache/bundle_transfer.h"

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

Result<Bundle> BundleTransfer::Export(const BundleSelection& selection, BundleReport& report) {
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
  KILN_RETURN_IF_ERROR(Export(selection, collect, report));
  return bundle;
}

Status BundleTransfer::Export(const BundleSelection& selection, const BundleSink& sink, BundleReport& report) {
  report = {};
  ListFilter filter{.tenant = selection.tenant, .chip = selection.chip, .limit = kExportPage};
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::vector<EntryMetadata> page, store_.List(filter));
    if (page.empty()) break;
    filter.after_row_id = page.back().row_id;
    for (const EntryMetadata& listed : page) {
      if (!Selected(selection, listed)) continue;
      KILN_ASSIGN_OR_RETURN(std::shared_ptr<const HotEntry> read, store_.ReadVerified(listed.id));
      if (read == nullptr) {  // corrupt (now quarantined) or evicted meanwhile
        ++report.skipped_corrupt;
        continue;
      }
      BundleEntry entry;
      entry.metadata = read->metadata;
      entry.executable = read->executable;
      KILN_ASSIGN_OR_RETURN(entry.components, store_.Components(listed.id));
      // A damaged text is only a lost explanation: the entry goes without.
      if (Result<std::optional<std::string>> source = store_.Source(listed.id); source && *source) {
        entry.source_text = std::move(**source);
      }
      {  // the lease is returned before the sink runs
        KILN_ASSIGN_OR_RETURN(ReaderLease reader, store_.readers_->Acquire());
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
  KILN_ASSIGN_OR_RETURN(std::vector<TuningRecord> all, store_.tuning_records().List(records));
  // Oldest first, so an import adds them in the order they were measured.
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->created_ms < selection.since_ms) continue;
    KILN_RETURN_IF_ERROR(sink.record(*it));
    ++report.records;
  }
  return Ok();
}

Result<PreparedEntry> BundleTransfer::Prepare(const BundleEntry& entry, const ImportOptions& options) {
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
    KILN_ASSIGN_OR_RETURN(prepared.frame, ZstdCompress(entry.executable, store_.options_.zstd_level, nullptr));
  }
  metadata.stored_bytes = prepared.frame.size();
  metadata.dictionary_id = 0;
  if (!entry.source_text.empty() && entry.source_text.size() <= kMaxSourceBytes) {
    if (!entry.source_frame.empty()) {
      prepared.source_frame = entry.source_frame;  // checked when it was read, likewise
    } else {
      KILN_ASSIGN_OR_RETURN(prepared.source_frame,
                            ZstdCompress(entry.source_text, store_.options_.zstd_level, nullptr));
    }
  }
  return prepared;
}

Status BundleTransfer::ImportBatch(std::span<const BundleEntry> entries, std::span<const TuningRecord> records,
                               const ImportOptions& options, BundleReport& report) {
  KILN_RETURN_IF_ERROR(store_.writer_->CheckWritable());
  // Compressing (when a frame must be made) happens outside the writer lock.
  std::vector<PreparedEntry> prepared;
  prepared.reserve(entries.size());
  for (const BundleEntry& entry : entries) {
    KILN_ASSIGN_OR_RETURN(PreparedEntry one, Prepare(entry, options));
    prepared.push_back(std::move(one));
  }
  BundleReport batch;
  uint64_t added_bytes = 0;
  auto write = [&](Connection& writer) -> Status {
    KILN_ASSIGN_OR_RETURN(Statement existing,
                          writer.Prepare("SELECT checksum, quarantined FROM entries WHERE tenant = ?1 AND key = ?2 "
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
      KILN_RETURN_IF_ERROR(WriteEntryRows(writer, request, prepared[i], /*keep_components=*/false));
      added_bytes += metadata.stored_bytes;
      ++batch.entries;
    }
    for (const TuningRecord& record : records) {
      KILN_ASSIGN_OR_RETURN(bool added,
                            TuningRecords::AddUnlessPresent(writer, record, options.tenant.value_or(record.tenant)));
      ++(added ? batch.records : batch.records_present);
    }
    return Ok();
  };
  KILN_RETURN_IF_ERROR(store_.writer_->Write(write, [&](Connection& writer) {
    store_.AddedBytesLocked(writer, added_bytes);
  }));
  report.entries += batch.entries;
  report.entries_present += batch.entries_present;
  report.conflicts += batch.conflicts;
  report.records += batch.records;
  report.records_present += batch.records_present;
  return Ok();
}

Result<BundleReport> BundleTransfer::Import(const Bundle& bundle, const ImportOptions& options) {
  BundleReport report;
  KILN_RETURN_IF_ERROR(ImportBatch(bundle.entries, bundle.records, options, report));
  return report;
}

Result<BundleReport> BundleTransfer::Import(BundleReader& reader, const ImportOptions& options) {
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
