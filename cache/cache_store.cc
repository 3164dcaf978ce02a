#include "cache/cache_store.h"

#include <chrono>
#include <utility>

#include "base/clock.h"
#include "cache/checksum.h"
#include "cache/migrations.h"
#include "cache/store_rows.h"

namespace kiln::cache {
namespace {

Status ValidateId(const EntryId& id) {
  if (id.tenant.empty()) return InvalidArgumentError("cache: entry tenant is empty");
  if (id.chip.empty()) return InvalidArgumentError("cache: entry chip is empty");
  return Ok();
}

}  // namespace

CacheStore::CacheStore(CacheStoreOptions options)
    : options_(std::move(options)), hot_set_(options_.hot_set_bytes) {
  if (!options_.clock) options_.clock = UnixNowMs;
  last_hit_flush_ms_ = options_.clock();
}

CacheStore::~CacheStore() {
  if (writer_ != nullptr) (void)FlushHitStats();
}

Result<std::unique_ptr<CacheStore>> CacheStore::Open(CacheStoreOptions options) {
  std::unique_ptr<CacheStore> store(new CacheStore(std::move(options)));
  const CacheStoreOptions& opts = store->options_;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> connection,
                        Connection::Open(opts.path, {.create_if_missing = opts.create_if_missing,
                                                     .busy_timeout_ms = opts.busy_timeout_ms,
                                                     .synchronous_full = opts.synchronous_full}));
  if (!opts.create_if_missing) {
    KILN_ASSIGN_OR_RETURN(int64_t version, connection->QueryInt("PRAGMA user_version"));
    if (version == 0) return InvalidArgumentError(opts.path + " is not a kiln cache database (no kiln schema in it)");
  }
  if (connection->read_only()) {
    // Nothing can migrate it: it must already be at the latest schema.
    KILN_ASSIGN_OR_RETURN(int version, SchemaVersion(*connection));
    const int latest = LatestVersion(EmbeddedMigrations());
    if (version != latest) {
      return FailedPreconditionError("cache " + opts.path + " is read-only and at schema version " +
                                     std::to_string(version) + ", but this kiln needs version " +
                                     std::to_string(latest) +
                                     ": open it writable once (e.g. kiln inspect stats --db FILE) to migrate it");
    }
  } else if (auto migrated = Migrate(*connection, EmbeddedMigrations()); !migrated) {
    return migrated.error().WithContext("cache " + opts.path);
  }
  KILN_ASSIGN_OR_RETURN(store->writer_, StoreWriter::Create(std::move(connection), opts.path, opts.reserve_bytes,
                                                            opts.busy_timeout_ms));
  CacheStore* self = store.get();
  // Hit counts are advisory: written before every write, and a failure to
  // write them (a full disk) must not keep the write out.
  store->writer_->set_pre_write([self](Connection& writer) { (void)self->FlushHitStatsLocked(writer); });
  store->readers_ = std::make_unique<ReaderPool>(
      opts.path, opts.reader_connections,
      ConnectionOptions{.read_only = true, .busy_timeout_ms = opts.busy_timeout_ms,
                        .cache_kib = opts.reader_cache_kib, .mmap_bytes = opts.reader_mmap_bytes});
  KILN_ASSIGN_OR_RETURN(store->totals_,
                        TotalsReader::Open(opts.path, ConnectionOptions{.busy_timeout_ms = opts.busy_timeout_ms}));
  KILN_RETURN_IF_ERROR(store->totals_->Current());  // loaded once here; again only after commits
  store->compile_log_ =
      std::make_unique<CompileLog>(*store->writer_, *store->readers_, opts.compile_log_rows, opts.clock);
  store->tuning_records_ = std::make_unique<TuningRecords>(*store->writer_, *store->readers_, opts.clock);
  store->bundles_ = std::make_unique<BundleTransfer>(*store);
  KILN_RETURN_IF_ERROR(store->writer_->Locked([self](Connection& writer) -> Status {
    KILN_RETURN_IF_ERROR(self->LoadDictionariesLocked(writer));
    KILN_ASSIGN_OR_RETURN(int64_t stored, writer.QueryInt("SELECT total(stored_bytes) FROM entry_totals"));
    self->approx_stored_bytes_ = static_cast<uint64_t>(stored);
    KILN_ASSIGN_OR_RETURN(self->invalidations_seen_,
                          writer.QueryInt("SELECT COALESCE(MAX(seq), 0) FROM invalidations"));
    return Ok();
  }));
  return store;
}

Result<std::optional<CacheHit>> CacheStore::Get(const EntryId& id) {
  KILN_RETURN_IF_ERROR(ValidateId(id));
  if (auto entry = hot_set_.Find(id)) {
    ++memory_hits_;
    RecordHit(entry->metadata);
    return CacheHit{.entry = entry, .pin = pins_->Pin(id), .from_memory = true};
  }
  // Read before the row: a write after it keeps these bytes out of the set.
  const uint64_t generation = hot_set_.generation();
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const HotEntry> entry, ReadVerified(id));
  if (entry == nullptr) {
    ++misses_;
    return std::nullopt;
  }
  ++disk_hits_;
  hot_set_.InsertIfUnchanged(entry, generation);
  RecordHit(entry->metadata);
  return CacheHit{.entry = std::move(entry), .pin = pins_->Pin(id), .from_memory = false};
}

CacheStore::HotHit CacheStore::TryGetHot(const EntryId& id, bool count_hit) {
  if (!ValidateId(id)) return {};
  std::shared_ptr<const HotEntry> entry = hot_set_.Find(id);
  if (entry == nullptr) return {};
  if (!count_hit) return HotHit{.entry = std::move(entry)};
  ++memory_hits_;
  const bool due = BufferHit(entry->metadata);
  return HotHit{.entry = std::move(entry), .hit_stats_due = due};
}

Result<std::shared_ptr<const HotEntry>> CacheStore::ReadVerified(const EntryId& id) {
  StoredRow row;
  {
    KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
    KILN_ASSIGN_OR_RETURN(
        Statement select,
        reader->Prepare("SELECT " KILN_ENTRY_METADATA_COLUMNS ", frame FROM entries JOIN executables ON entry_id = id "
                        "WHERE id = ?5 AND tenant = ?1 AND key = ?2 AND chip = ?3 AND format_version = ?4 "
                        "AND quarantined = 0"));
    select.BindText(1, id.tenant).BindText(2, id.key.Hex()).BindText(3, id.chip);
    select.Bind(4, static_cast<int64_t>(id.format_version)).Bind(5, EntryRowId(id));
    KILN_ASSIGN_OR_RETURN(bool found, select.Step());
    if (!found) return nullptr;
    KILN_ASSIGN_OR_RETURN(row.metadata, MetadataFromRow(select));
    row.frame = select.ColumnBlob(kEntryMetadataColumnCount);
  }
  auto raw = DecodeRow(row);
  if (!raw) {
    // Never served either way; when the mark cannot be written (a full
    // disk) the next read finds the entry bad again and retries.
    (void)Quarantine(row.metadata.row_id, row.metadata.checksum);
    return nullptr;
  }
  auto entry = std::make_shared<HotEntry>();
  entry->metadata = std::move(row.metadata);
  entry->executable = std::move(*raw);
  return entry;
}

Result<std::string> CacheStore::DecodeRow(const StoredRow& row) {
  const EntryMetadata& metadata = row.metadata;
  const std::string where = "entry " + metadata.id.ToString() + ": ";
  if (row.frame.size() != metadata.stored_bytes) {
    return DataLossError(where + "stored " + std::to_string(row.frame.size()) + " bytes, recorded " +
                         std::to_string(metadata.stored_bytes));
  }
  std::shared_ptr<const ZstdDictionary> dictionary;
  if (metadata.dictionary_id != 0) {
    auto found = DictionaryById(metadata.dictionary_id);
    if (!found) return DataLossError(where + found.error().ToString());
    dictionary = std::move(*found);
  }
  auto raw = ZstdDecompress(row.frame, metadata.raw_bytes, dictionary.get());
  if (!raw) return DataLossError(where + raw.error().ToString());
  const uint64_t checksum = ExecutableChecksum(*raw);
  if (checksum != metadata.checksum) {
    return DataLossError(where + "checksum mismatch (stored " + std::to_string(metadata.checksum) + ", computed " +
                         std::to_string(checksum) + ")");
  }
  return raw;
}

Result<std::shared_ptr<const ZstdDictionary>> CacheStore::DictionaryById(uint32_t id) {
  {
    std::lock_guard lock(dictionaries_mutex_);
    auto it = dictionaries_.find(id);
    if (it != dictionaries_.end()) return it->second;
  }
  // Another process may have trained it since we opened.
  KILN_RETURN_IF_ERROR(writer_->Locked([this](Connection& writer) { return LoadDictionariesLocked(writer); }));
  std::lock_guard lock(dictionaries_mutex_);
  auto it = dictionaries_.find(id);
  if (it == dictionaries_.end()) return DataLossError("unknown zstd dictionary " + std::to_string(id));
  return it->second;
}

Status CacheStore::LoadDictionariesLocked(Connection& writer) {
  KILN_ASSIGN_OR_RETURN(Statement select,
                        writer.Prepare("SELECT id, bytes FROM dictionaries ORDER BY created_ms, id"));
  std::unordered_map<uint32_t, std::shared_ptr<const ZstdDictionary>> loaded;
  std::shared_ptr<const ZstdDictionary> newest;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    auto dictionary = ZstdDictionary::Create(select.ColumnBlob(1), options_.zstd_level);
    // A damaged dictionary is skipped: entries using it fail to decode and
    // are quarantined; new entries go without.
    if (!dictionary || (*dictionary)->id() != static_cast<uint32_t>(select.ColumnInt(0))) continue;
    newest = *dictionary;
    loaded.emplace(newest->id(), newest);
  }
  std::lock_guard lock(dictionaries_mutex_);
  dictionaries_ = std::move(loaded);
  active_dictionary_ = std::move(newest);
  return Ok();
}

Status CacheStore::Quarantine(int64_t row_id, uint64_t checksum) {
  // Advisory: the entry is never served either way, so a mark that cannot
  // be written (a full disk) is not the store's health; the next read of
  // the entry tries again.
  return writer_->Locked([&](Connection& writer) -> Status {
    KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(writer));
    KILN_ASSIGN_OR_RETURN(Statement update,
                          writer.Prepare("UPDATE entries SET quarantined = 1 "
                                         "WHERE id = ?1 AND checksum = ?2 AND quarantined = 0"));
    KILN_RETURN_IF_ERROR(update.Bind(1, row_id).Bind(2, ChecksumToSql(checksum)).Run());
    // Counted once, even when several readers found the same bad entry.
    if (writer.Changes() > 0) KILN_RETURN_IF_ERROR(BumpCounter(writer, "quarantined", 1));
    return transaction.Commit();
  });
}

bool CacheStore::BufferHit(const EntryMetadata& metadata) {
  std::lock_guard lock(hits_mutex_);
  const int64_t now = Now();
  PendingHit& pending = pending_hits_[metadata.row_id];
  ++pending.count;
  pending.last_ms = now;
  return ++pending_hit_total_ >= options_.hit_flush_interval ||
         now - last_hit_flush_ms_ >= options_.hit_flush_delay_ms;
}

void CacheStore::RecordHit(const EntryMetadata& metadata) {
  if (!BufferHit(metadata)) return;
  // Hit statistics are advisory (they steer eviction): a read never waits
  // for a writer to flush them, and a failed flush is retried by the next
  // hit rather than failing this read.
  (void)writer_->TryLocked([this](Connection& writer) { (void)FlushHitStatsLocked(writer); });
}

Status CacheStore::FlushHitStats() {
  return writer_->Locked([this](Connection& writer) { return FlushHitStatsLocked(writer); });
}

Status CacheStore::FlushHitStatsLocked(Connection& writer) {
  std::unordered_map<int64_t, PendingHit> pending;
  {
    std::lock_guard lock(hits_mutex_);
    pending.swap(pending_hits_);
    pending_hit_total_ = 0;
    last_hit_flush_ms_ = Now();
  }
  if (pending.empty()) return Ok();
  // On failure the counts are dropped: they are advisory, and retrying
  // forever would grow the map without bound.
  KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(writer));
  KILN_ASSIGN_OR_RETURN(Statement update,
                        writer.Prepare("UPDATE entries SET hit_count = hit_count + ?2, "
                                         "last_hit_ms = max(last_hit_ms, ?3) WHERE id = ?1"));
  for (const auto& [row_id, hit] : pending) {
    KILN_RETURN_IF_ERROR(update.Bind(1, row_id).Bind(2, hit.count).Bind(3, hit.last_ms).Run());
  }
  return transaction.Commit();
}

Status CacheStore::Put(const PutRequest& request) {
  KILN_RETURN_IF_ERROR(StoreEntry(request));
  const bool try_dictionary = options_.dictionary_training_puts > 0 &&
                              puts_.load() >= options_.dictionary_training_puts &&
                              !dictionary_attempted_.exchange(true);
  if (try_dictionary) {
    bool have_dictionary = false;
    {
      std::lock_guard lock(dictionaries_mutex_);
      have_dictionary = active_dictionary_ != nullptr;
    }
    // Best effort: without a dictionary entries are merely larger.
    if (!have_dictionary) (void)TrainDictionary();
  }
  return Ok();
}

Result<PreparedEntry> CacheStore::PrepareEntry(const PutRequest& request) {
  KILN_RETURN_IF_ERROR(ValidateId(request.id));
  KILN_RETURN_IF_ERROR(writer_->CheckWritable());
  if (request.executable.size() > kMaxExecutableBytes) {
    return ResourceExhaustedError("cache: executable of " + std::to_string(request.executable.size()) +
                                  " bytes exceeds the limit");
  }
  std::shared_ptr<const ZstdDictionary> dictionary;
  {
    std::lock_guard lock(dictionaries_mutex_);
    dictionary = active_dictionary_;
  }
  PreparedEntry prepared;
  KILN_ASSIGN_OR_RETURN(prepared.frame, ZstdCompress(request.executable, options_.zstd_level, dictionary.get()));
  if (!request.source_text.empty() && request.source_text.size() <= kMaxSourceBytes) {
    KILN_ASSIGN_OR_RETURN(prepared.source_frame, ZstdCompress(request.source_text, options_.zstd_level, nullptr));
  }
  prepared.entry = std::make_shared<HotEntry>();
  EntryMetadata& metadata = prepared.entry->metadata;
  metadata.id = request.id;
  metadata.options = request.options;
  metadata.plan_kind = request.plan_kind;
  metadata.raw_bytes = request.executable.size();
  metadata.stored_bytes = prepared.frame.size();
  metadata.checksum = ExecutableChecksum(request.executable);
  metadata.dictionary_id = dictionary != nullptr ? dictionary->id() : 0;
  metadata.compile_seconds = request.compile_seconds;
  metadata.device_seconds = request.device_seconds;
  metadata.tune_seconds = request.tune_seconds;
  metadata.created_ms = metadata.last_hit_ms = Now();
  return prepared;
}

void CacheStore::PublishEntryLocked(Connection& writer, const PutRequest& request, std::shared_ptr<HotEntry> entry) {
  const uint64_t stored_bytes = entry->metadata.stored_bytes;
  entry->executable.assign(request.executable);
  hot_set_.Insert(std::move(entry));  // may drop it at once
  // A replaced entry is counted twice here; the exact recount in
  // EvictToBudgetLocked corrects the estimate.
  AddedBytesLocked(writer, stored_bytes);
}

void CacheStore::AddedBytesLocked(Connection& writer, uint64_t stored_bytes) {
  approx_stored_bytes_ += stored_bytes;
  if (options_.max_bytes > 0 && approx_stored_bytes_ > options_.max_bytes) {
    // What was written stays whatever happens here: a failed eviction is
    // retried by the next write over the budget.
    (void)EvictToBudgetLocked(writer);
  }
}

Status CacheStore::StoreEntry(const PutRequest& request) {
  // Compress outside the writer lock: it is the slow part.
  KILN_ASSIGN_OR_RETURN(PreparedEntry prepared, PrepareEntry(request));
  return writer_->Write(
      [&](Connection& writer) { return WriteEntryRows(writer, request, prepared, /*keep_components=*/false); },
      [&](Connection& writer) {
        ++puts_;
        PublishEntryLocked(writer, request, std::move(prepared.entry));
      });
}

Result<std::optional<Hash128>> CacheStore::LookupRequest(const std::string& tenant, const Hash128& request_hash,
                                                         const std::string& chip, uint32_t format_version) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT key FROM request_keys WHERE tenant = ?1 AND request_hash = ?2 "
                                        "AND chip = ?3 AND format_version = ?4"));
  select.BindText(1, tenant).BindText(2, request_hash.Hex()).BindText(3, chip);
  KILN_ASSIGN_OR_RETURN(bool found, select.Bind(4, static_cast<int64_t>(format_version)).Step());
  if (!found) return std::nullopt;
  KILN_ASSIGN_OR_RETURN(Hash128 key, ParseHash128(select.ColumnText(0)));
  return key;
}

}  // namespace kiln::cache
