// CacheStore: listing, verification, eviction and statistics.
#include <algorithm>
#include <unordered_map>

#include "cache/cache_store.h"
#include "cache/store_rows.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {
namespace {

constexpr int kVerifyBatchRows = 64;

Statement& BindId(Statement& statement, const EntryId& id) {
  statement.BindText(1, id.tenant).BindText(2, id.key.Hex()).BindText(3, id.chip);
  return statement.Bind(4, static_cast<int64_t>(id.format_version));
}

}  // namespace

Result<std::vector<EntryMetadata>> CacheStore::List(const ListFilter& filter) {
  (void)FlushHitStats();  // advisory figures: a full disk must not stop a listing
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  const char* order = "id";
  switch (filter.order) {
    case ListOrder::kRowId: break;
    case ListOrder::kHits: order = "hit_count DESC, id"; break;
    case ListOrder::kSaved: order = "hit_count * compile_seconds DESC, id"; break;
    case ListOrder::kBytes: order = "stored_bytes DESC, id"; break;
    case ListOrder::kAge: order = "created_ms, id"; break;
  }
  KILN_ASSIGN_OR_RETURN(
      Statement select,
      reader->Prepare(std::string("SELECT " KILN_ENTRY_METADATA_COLUMNS " FROM entries WHERE id > ?1 "
                                  "AND (?2 IS NULL OR tenant = ?2) AND (?3 IS NULL OR chip = ?3) "
                                  "AND (?4 IS NULL OR substr(key, 1, length(?4)) = lower(?4)) "
                                  "AND (?5 = 0 OR quarantined = 1) ORDER BY ") +
                      order + " LIMIT ?6"));
  select.Bind(1, filter.order == ListOrder::kRowId ? filter.after_row_id : int64_t{0});
  filter.tenant ? select.BindText(2, *filter.tenant) : select.BindNull(2);
  filter.chip ? select.BindText(3, *filter.chip) : select.BindNull(3);
  filter.key_prefix ? select.BindText(4, *filter.key_prefix) : select.BindNull(4);
  select.Bind(5, int64_t{filter.quarantined_only}).Bind(6, int64_t{filter.limit});
  std::vector<EntryMetadata> entries;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    KILN_ASSIGN_OR_RETURN(EntryMetadata metadata, MetadataFromRow(select));
    entries.push_back(std::move(metadata));
  }
  return entries;
}

Result<std::optional<EntryMetadata>> CacheStore::GetMetadata(const EntryId& id) {
  (void)FlushHitStats();  // advisory figures
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT " KILN_ENTRY_METADATA_COLUMNS " FROM entries WHERE tenant = ?1 "
                                        "AND key = ?2 AND chip = ?3 AND format_version = ?4"));
  KILN_ASSIGN_OR_RETURN(bool found, BindId(select, id).Step());
  if (!found) return std::nullopt;
  KILN_ASSIGN_OR_RETURN(EntryMetadata metadata, MetadataFromRow(select));
  return metadata;
}

Result<std::vector<KeyComponent>> CacheStore::Components(const EntryId& id) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT c.component, c.hash FROM key_components c "
                                        "JOIN entries e ON e.id = c.entry_id WHERE e.tenant = ?1 "
                                        "AND e.key = ?2 AND e.chip = ?3 AND e.format_version = ?4 "
                                        "ORDER BY c.rowid"));
  BindId(select, id);
  std::vector<KeyComponent> components;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    KILN_ASSIGN_OR_RETURN(Hash128 hash, ParseHash128(select.ColumnText(1)));
    components.push_back({std::string(select.ColumnText(0)), hash});
  }
  return components;
}

Result<std::optional<std::string>> CacheStore::Source(const EntryId& id) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT s.raw_bytes, s.frame FROM entry_sources s JOIN entries e ON e.id = s.entry_id "
                                        "WHERE e.tenant = ?1 AND e.key = ?2 AND e.chip = ?3 AND e.format_version = ?4"));
  BindId(select, id);
  KILN_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return std::nullopt;
  const int64_t raw_bytes = select.ColumnInt(0);
  if (raw_bytes < 0 || static_cast<uint64_t>(raw_bytes) > kMaxSourceBytes) {
    return DataLossError("cache: the source text of " + id.ToString() + " claims " + std::to_string(raw_bytes) + " bytes");
  }
  auto text = ZstdDecompress(select.ColumnBlob(1), static_cast<uint64_t>(raw_bytes), nullptr);
  if (!text) return text.error().WithContext("cache: the source text of " + id.ToString());
  return std::optional<std::string>(std::move(*text));
}

Result<VerifyReport> CacheStore::VerifyAll() {
  VerifyReport report;
  int64_t after = 0;
  while (true) {
    std::vector<StoredRow> batch;
    {
      KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
      KILN_ASSIGN_OR_RETURN(Statement select,
                            reader->Prepare("SELECT " KILN_ENTRY_METADATA_COLUMNS ", frame FROM entries JOIN executables ON entry_id = id "
                                            "WHERE id > ?1 ORDER BY id LIMIT ?2"));
      select.Bind(1, after).Bind(2, int64_t{kVerifyBatchRows});
      while (true) {
        KILN_ASSIGN_OR_RETURN(bool row, select.Step());
        if (!row) break;
        StoredRow stored;
        KILN_ASSIGN_OR_RETURN(stored.metadata, MetadataFromRow(select));
        stored.frame = select.ColumnBlob(kEntryMetadataColumnCount);
        batch.push_back(std::move(stored));
      }
    }
    if (batch.empty()) break;
    after = batch.back().metadata.row_id;
    for (StoredRow& row : batch) {
      ++report.checked;
      if (row.metadata.quarantined) {
        ++report.already_quarantined;
        continue;
      }
      if (DecodeRow(row)) {
        ++report.ok;
        continue;
      }
      KILN_RETURN_IF_ERROR(Quarantine(row.metadata.row_id, row.metadata.checksum));
      hot_set_.Erase(row.metadata.id);
      row.metadata.quarantined = true;
      report.newly_quarantined.push_back(std::move(row.metadata));
    }
  }
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement check, reader->Prepare("PRAGMA integrity_check"));
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, check.Step());
    if (!row) break;
    if (!report.integrity_check.empty()) report.integrity_check += "\n";
    report.integrity_check += check.ColumnText(0);
  }
  return report;
}

Result<bool> CacheStore::Evict(const EntryId& id) {
  if (pins_->IsPinned(id)) {
    return FailedPreconditionError("cache: entry " + id.ToString() +
                                   " is in use by a request that is running or sending it; retry when it ends")
        .WithReason(std::string(kEntryInUse))
        .RetryAfter(1);
  }
  int64_t erased = 0;
  auto erase = [&](Connection& writer) -> Result<int64_t> {
    {
      KILN_ASSIGN_OR_RETURN(Statement erase,
                            writer.Prepare("DELETE FROM entries WHERE tenant = ?1 AND key = ?2 "
                                           "AND chip = ?3 AND format_version = ?4"));
      KILN_RETURN_IF_ERROR(BindId(erase, id).Run());
    }
    const int64_t rows = writer.Changes();
    {
      // Request bodies that named the entry would only lead to it again.
      KILN_ASSIGN_OR_RETURN(Statement forget,
                            writer.Prepare("DELETE FROM request_keys WHERE tenant = ?1 AND key = ?2 "
                                           "AND chip = ?3 AND format_version = ?4"));
      KILN_RETURN_IF_ERROR(BindId(forget, id).Run());
    }
    if (rows > 0) KILN_RETURN_IF_ERROR(BumpCounter(writer, "evicted", 1));
    erased = rows;
    return rows;
  };
  KILN_RETURN_IF_ERROR(writer_->Delete(erase, [&](Connection& writer) {
    hot_set_.Erase(id);
    if (erased == 0) return;
    // Return the freed pages to the file system now (best effort: the
    // entry is gone either way, and its pages are reused by later puts).
    (void)writer.Execute("PRAGMA incremental_vacuum");
    (void)writer.Execute("PRAGMA wal_checkpoint(PASSIVE)");
  }));
  return erased > 0;
}

Result<EvictionReport> CacheStore::EvictToBudgetLocked(Connection& writer) {
  EvictionReport report;
  if (options_.max_bytes == 0) return report;
  KILN_ASSIGN_OR_RETURN(int64_t counted, writer.QueryInt("SELECT total(stored_bytes) FROM entry_totals"));
  approx_stored_bytes_ = static_cast<uint64_t>(counted);
  if (approx_stored_bytes_ <= options_.max_bytes) return report;
  (void)FlushHitStatsLocked(writer);  // advisory: eviction works from what is written
  std::vector<EvictionCandidate> candidates;
  std::unordered_map<int64_t, EntryId> ids;
  uint64_t total = 0;
  {
    KILN_ASSIGN_OR_RETURN(Statement select,
                          writer.Prepare("SELECT id, tenant, key, chip, format_version, stored_bytes, "
                                         "compile_seconds, hit_count, last_hit_ms, quarantined FROM entries"));
    while (true) {
      KILN_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      EvictionCandidate candidate;
      candidate.row_id = select.ColumnInt(0);
      KILN_ASSIGN_OR_RETURN(Hash128 key, ParseHash128(select.ColumnText(2)));
      EntryId id{std::string(select.ColumnText(1)), key, std::string(select.ColumnText(3)),
                 static_cast<uint32_t>(select.ColumnInt(4))};
      candidate.stored_bytes = static_cast<uint64_t>(select.ColumnInt(5));
      const bool quarantined = select.ColumnInt(9) != 0;
      // A quarantined entry saves nothing: it goes first.
      candidate.compile_seconds = quarantined ? 0 : select.ColumnDouble(6);
      candidate.hit_count = quarantined ? 0 : select.ColumnInt(7);
      candidate.last_used_ms = quarantined ? 0 : select.ColumnInt(8);
      candidate.pinned = pins_->IsPinned(id);
      report.skipped_pinned += candidate.pinned ? 1 : 0;
      total += candidate.stored_bytes;
      ids.emplace(candidate.row_id, std::move(id));
      candidates.push_back(candidate);
    }
  }
  std::unordered_map<int64_t, uint64_t> sizes;
  for (const EvictionCandidate& candidate : candidates) sizes.emplace(candidate.row_id, candidate.stored_bytes);
  std::vector<int64_t> victims =
      ChooseVictims(std::move(candidates), total, options_.max_bytes, Now(), options_.eviction);
  if (victims.empty()) return report;
  {
    KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(writer));
    KILN_ASSIGN_OR_RETURN(Statement erase, writer.Prepare("DELETE FROM entries WHERE id = ?1"));
    for (int64_t row_id : victims) {
      KILN_RETURN_IF_ERROR(erase.Bind(1, row_id).Run());
      report.freed_bytes += sizes[row_id];
    }
    // Request-body mappings to keys that no longer have any entry.
    KILN_RETURN_IF_ERROR(writer.Execute(
        "DELETE FROM request_keys WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.tenant = "
        "request_keys.tenant AND e.key = request_keys.key AND e.chip = request_keys.chip AND "
        "e.format_version = request_keys.format_version)"));
    report.evicted = static_cast<int64_t>(victims.size());
    KILN_RETURN_IF_ERROR(BumpCounter(writer, "evicted", report.evicted));
    KILN_RETURN_IF_ERROR(transaction.Commit());
  }
  approx_stored_bytes_ -= std::min(approx_stored_bytes_, report.freed_bytes);
  for (int64_t row_id : victims) hot_set_.Erase(ids[row_id]);
  (void)writer.Execute("PRAGMA incremental_vacuum");  // best effort: freed pages are reused anyway
  return report;
}

Result<StoreStats> CacheStore::Stats() {
  StoreStats stats;
  stats.max_bytes = options_.max_bytes;
  stats.hot_bytes = hot_set_.bytes();
  stats.hot_entries = hot_set_.size();
  stats.memory_hits = memory_hits_.load();
  stats.disk_hits = disk_hits_.load();
  stats.misses = misses_.load();
  stats.puts = puts_.load();
  {
    std::lock_guard lock(dictionaries_mutex_);
    stats.dictionary_id = active_dictionary_ != nullptr ? active_dictionary_->id() : 0;
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const StoreTotals> totals, Totals());
  stats.entries = totals->all.live.entries + totals->all.quarantined.entries;
  stats.quarantined_entries = totals->all.quarantined.entries;
  stats.raw_bytes = totals->all.live.raw_bytes + totals->all.quarantined.raw_bytes;
  stats.stored_bytes = totals->all.live.stored_bytes + totals->all.quarantined.stored_bytes;
  stats.quarantined_total = totals->quarantined_total;
  stats.evicted_total = totals->evicted_total;
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(int64_t page_size, reader->QueryInt("PRAGMA page_size"));
  KILN_ASSIGN_OR_RETURN(int64_t page_count, reader->QueryInt("PRAGMA page_count"));
  KILN_ASSIGN_OR_RETURN(int64_t free_pages, reader->QueryInt("PRAGMA freelist_count"));
  stats.file_bytes = static_cast<uint64_t>(page_size * page_count);
  stats.free_bytes = static_cast<uint64_t>(page_size * free_pages);
  return stats;
}

Result<std::shared_ptr<const StoreTotals>> CacheStore::Totals() { return totals_->Current(); }

}  // namespace kiln::cache
