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

CacheStore::~CacheStore() { (void)FlushHitStats(); }

Result<std::unique_ptr<CacheStore>> CacheStore::Open(CacheStoreOptions options) {
  std::unique_ptr<CacheStore> store(new CacheStore(std::move(options)));
  const CacheStoreOptions& opts = store->options_;
  KILN_ASSIGN_OR_RETURN(
      store->writer_,
      Connection::Open(opts.path, {.create_if_missing = opts.create_if_missing,
                                   .busy_timeout_ms = opts.busy_timeout_ms,
                                   .synchronous_full = opts.synchronous_full}));
  if (!opts.create_if_missing) {
    KILN_ASSIGN_OR_RETURN(int64_t version, store->writer_->QueryInt("PRAGMA user_version"));
    if (version == 0) return InvalidArgumentError(opts.path + " is not a kiln cache database (no kiln schema in it)");
  }
  KILN_RETURN_IF_ERROR(store->CheckStorage());
  auto migrated = Migrate(*store->writer_, EmbeddedMigrations());
  if (!migrated) return migrated.error().WithContext("cache " + opts.path);
  store->readers_ = std::make_unique<ReaderPool>(
      opts.path, opts.reader_connections,
      ConnectionOptions{.read_only = true, .busy_timeout_ms = opts.busy_timeout_ms,
                        .cache_kib = opts.reader_cache_kib, .mmap_bytes = opts.reader_mmap_bytes});
  KILN_ASSIGN_OR_RETURN(store->totals_,
                        TotalsReader::Open(opts.path, ConnectionOptions{.busy_timeout_ms = opts.busy_timeout_ms}));
  KILN_RETURN_IF_ERROR(store->totals_->Current());  // loaded once here; again only after commits
  std::lock_guard lock(store->writer_mutex_);
  KILN_RETURN_IF_ERROR(store->LoadDictionariesLocked());
  KILN_ASSIGN_OR_RETURN(int64_t stored, store->writer_->QueryInt("SELECT total(stored_bytes) FROM entry_totals"));
  store->approx_stored_bytes_ = static_cast<uint64_t>(stored);
  KILN_ASSIGN_OR_RETURN(store->invalidations_seen_,
                        store->writer_->QueryInt("SELECT COALESCE(MAX(seq), 0) FROM invalidations"));
  return store;
}

int64_t CacheStore::Now() const { return options_.clock(); }

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
  std::lock_guard writer_lock(writer_mutex_);
  KILN_RETURN_IF_ERROR(LoadDictionariesLocked());
  std::lock_guard lock(dictionaries_mutex_);
  auto it = dictionaries_.find(id);
  if (it == dictionaries_.end()) return DataLossError("unknown zstd dictionary " + std::to_string(id));
  return it->second;
}

Status CacheStore::LoadDictionariesLocked() {
  KILN_ASSIGN_OR_RETURN(Statement select,
                        writer_->Prepare("SELECT id, bytes FROM dictionaries ORDER BY created_ms, id"));
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
  std::lock_guard lock(writer_mutex_);
  KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*writer_));
  KILN_ASSIGN_OR_RETURN(Statement update,
                        writer_->Prepare("UPDATE entries SET quarantined = 1 "
                                         "WHERE id = ?1 AND checksum = ?2 AND quarantined = 0"));
  KILN_RETURN_IF_ERROR(update.Bind(1, row_id).Bind(2, ChecksumToSql(checksum)).Run());
  // Counted once, even when several readers found the same bad entry.
  if (writer_->Changes() > 0) KILN_RETURN_IF_ERROR(BumpCounterLocked("quarantined", 1));
  return transaction.Commit();
}

Status CacheStore::BumpCounterLocked(const char* name, int64_t delta) {
  KILN_ASSIGN_OR_RETURN(Statement bump,
                        writer_->Prepare("INSERT INTO counters (name, value) VALUES (?1, ?2) "
                                         "ON CONFLICT (name) DO UPDATE SET value = value + ?2"));
  return bump.BindText(1, name).Bind(2, delta).Run();
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
  std::unique_lock lock(writer_mutex_, std::try_to_lock);
  if (lock.owns_lock()) (void)FlushHitStatsLocked();
}

Status CacheStore::FlushHitStats() {
  std::lock_guard lock(writer_mutex_);
  return FlushHitStatsLocked();
}

Status CacheStore::FlushHitStatsLocked() {
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
  KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*writer_));
  KILN_ASSIGN_OR_RETURN(Statement update,
                        writer_->Prepare("UPDATE entries SET hit_count = hit_count + ?2, "
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

Result<CacheStore::PreparedEntry> CacheStore::PrepareEntry(const PutRequest& request) {
  KILN_RETURN_IF_ERROR(ValidateId(request.id));
  if (read_only_) return ReadOnlyError();
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

void CacheStore::PublishEntryLocked(const PutRequest& request, std::shared_ptr<HotEntry> entry) {
  WriteSucceededLocked();
  // A replaced entry is counted twice here; the exact recount in
  // EvictToBudgetLocked corrects the estimate.
  approx_stored_bytes_ += entry->metadata.stored_bytes;
  entry->executable.assign(request.executable);
  hot_set_.Insert(std::move(entry));  // may drop it at once
  if (options_.max_bytes > 0 && approx_stored_bytes_ > options_.max_bytes) {
    // The entry is stored whatever happens here: a failed eviction is
    // retried by the next put over the budget.
    (void)EvictToBudgetLocked();
  }
}

Status CacheStore::StoreEntry(const PutRequest& request) {
  // Compress outside the writer lock: it is the slow part.
  KILN_ASSIGN_OR_RETURN(PreparedEntry prepared, PrepareEntry(request));
  std::lock_guard lock(writer_mutex_);
  // Hit counts are advisory: a failure to write them (a full disk) must
  // not keep the entry out.
  (void)FlushHitStatsLocked();
  writer_->ClearLastFailure();
  auto write = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*writer_));
    KILN_RETURN_IF_ERROR(WriteEntryRowsLocked(request, prepared, /*keep_components=*/false));
    return transaction.Commit();
  };
  if (Status written = write(); !written) return WriteFailureLocked(written.error());
  ++puts_;
  PublishEntryLocked(request, std::move(prepared.entry));
  return {};
}

Status CacheStore::WriteEntryRowsLocked(const PutRequest& request, PreparedEntry& prepared, bool keep_components) {
  const std::string& frame = prepared.frame;
  const std::string& source_frame = prepared.source_frame;
  EntryMetadata& metadata = prepared.entry->metadata;
  const std::string key_hex = request.id.key.Hex();
  {
    KILN_ASSIGN_OR_RETURN(
        Statement upsert,
        writer_->Prepare(
            "INSERT INTO entries (id, tenant, key, chip, format_version, options, plan_kind, "
            "raw_bytes, stored_bytes, checksum, dictionary_id, compile_seconds, device_seconds, "
            "created_ms, last_hit_ms, hit_count, quarantined, tune_seconds) "
            "VALUES (?14, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13, 0, 0, ?15) "
            "ON CONFLICT (tenant, key, chip, format_version) DO UPDATE SET "
            "options = ?5, plan_kind = ?6, raw_bytes = ?7, stored_bytes = ?8, "
            "checksum = ?9, dictionary_id = ?10, compile_seconds = ?11, device_seconds = ?12, "
            "created_ms = ?13, last_hit_ms = ?13, quarantined = 0, tune_seconds = ?15 "
            "RETURNING id, hit_count"));
    upsert.BindText(1, request.id.tenant).BindText(2, key_hex).BindText(3, request.id.chip);
    upsert.Bind(4, static_cast<int64_t>(request.id.format_version)).BindText(5, request.options);
    upsert.BindText(6, PlanKindName(request.plan_kind));
    upsert.Bind(7, static_cast<int64_t>(metadata.raw_bytes)).Bind(8, static_cast<int64_t>(frame.size()));
    upsert.Bind(9, ChecksumToSql(metadata.checksum)).Bind(10, static_cast<int64_t>(metadata.dictionary_id));
    upsert.Bind(11, request.compile_seconds).Bind(12, request.device_seconds).Bind(13, metadata.created_ms);
    upsert.Bind(14, EntryRowId(request.id)).Bind(15, request.tune_seconds);
    auto stepped = upsert.Step();
    if (!stepped && writer_->last_failure() == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return AlreadyExistsError("cache: " + request.id.ToString() +
                                " collides with another entry's row id; not cached");
    }
    if (!stepped) return std::unexpected(stepped.error());
    if (!*stepped) return InternalError("cache: upsert of " + request.id.ToString() + " returned no row");
    metadata.row_id = upsert.ColumnInt(0);
    metadata.hit_count = upsert.ColumnInt(1);
    KILN_RETURN_IF_ERROR(upsert.Run());
  }
  KILN_ASSIGN_OR_RETURN(Statement bytes,
                        writer_->Prepare("INSERT OR REPLACE INTO executables (entry_id, frame) VALUES (?1, ?2)"));
  KILN_RETURN_IF_ERROR(bytes.Bind(1, metadata.row_id).BindBlob(2, frame).Run());
  if (!source_frame.empty()) {
    KILN_ASSIGN_OR_RETURN(
        Statement source,
        writer_->Prepare("INSERT OR REPLACE INTO entry_sources (entry_id, raw_bytes, frame) VALUES (?1, ?2, ?3)"));
    source.Bind(1, metadata.row_id).Bind(2, static_cast<int64_t>(request.source_text.size()));
    KILN_RETURN_IF_ERROR(source.BindBlob(3, source_frame).Run());
  }
  if (keep_components && request.components.empty()) return WriteRequestKeyLocked(request);
  KILN_ASSIGN_OR_RETURN(Statement clear,
                        writer_->Prepare("DELETE FROM key_components WHERE entry_id = ?1"));
  KILN_RETURN_IF_ERROR(clear.Bind(1, metadata.row_id).Run());
  KILN_ASSIGN_OR_RETURN(
      Statement component,
      writer_->Prepare("INSERT OR REPLACE INTO key_components (entry_id, component, hash) VALUES (?1, ?2, ?3)"));
  for (const KeyComponent& part : request.components) {
    KILN_RETURN_IF_ERROR(component.Bind(1, metadata.row_id).BindText(2, part.name).BindText(3, part.hash.Hex()).Run());
  }
  return WriteRequestKeyLocked(request);
}

Status CacheStore::WriteRequestKeyLocked(const PutRequest& request) {
  if (!request.request_hash) return Ok();
  KILN_ASSIGN_OR_RETURN(
      Statement map,
      writer_->Prepare("INSERT OR REPLACE INTO request_keys (tenant, request_hash, chip, format_version, key) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)"));
  map.BindText(1, request.id.tenant).BindText(2, request.request_hash->Hex()).BindText(3, request.id.chip);
  return map.Bind(4, static_cast<int64_t>(request.id.format_version)).BindText(5, request.id.key.Hex()).Run();
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
