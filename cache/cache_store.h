// The cache store: compiled executables in SQLite, behind a hot set.
//
// A CacheStore owns one SQLite file (WAL mode, migrated to the latest schema
// on Open), one writer connection, a pool of reader connections, the
// in-memory hot set and the active zstd dictionary. Executables are stored
// zstd-compressed with an XXH3-64 checksum of their raw bytes; every read
// from SQLite is decompressed and checked, and a mismatch quarantines the
// entry (never served again, counted) and reads as a miss, so the caller
// recompiles and Puts a good copy. The hot set holds bytes that were
// checked when they entered it (or were just Put), and serves them without
// hashing again. An entry is served only for its exact tenant (namespace),
// chip and compiler format version: the store never falls back from one
// namespace to another (the server decides which one a request uses).
//
// Space: when the stored (compressed) bytes exceed `max_bytes`, Put evicts
// by EvictionPolicy (compile-seconds saved per byte, decayed by idleness),
// skipping entries pinned by a live EntryPin (pins are per process), then
// returns freed pages to the file system (incremental vacuum).
//
// Figures: entry counts and bytes per namespace and chip are running totals
// kept in the file by triggers (store_totals.h), so Stats and Totals never
// scan the entries table.
//
// Errors: I/O and SQLite failures are returned as errors; a miss is an empty
// optional, not an error. Bad arguments (empty tenant, oversized executable)
// are errors naming the argument. Put and Evict say when they failed for
// lack of room or a read-only file (StorageProblemOf); the store keeps
// serving what it holds then. Reads never fail for a full disk: hit counts
// and quarantine marks that cannot be written are dropped (retried later).
//
// Disk full and read-only: a file of `reserve_bytes` beside the database
// (FILE-reserve) is kept allocated while there is room; a delete that finds
// the disk full releases it and retries, so entries can always be deleted
// to make room. A store opened read-only (a "file:...?mode=ro" URI, or a
// file or file system SQLite cannot write) serves hits; every Put and
// Evict fails with kReadOnly. It must already be at the latest schema.
//
// Thread-safety: every method is safe to call concurrently. Reads use the
// reader pool and run in parallel; writes are serialized through the single
// writer connection. Several processes may open the same file; SQLite's
// locks (with the busy timeout) serialize their writes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cache/bundle.h"
#include "cache/entry.h"
#include "cache/eviction_policy.h"
#include "cache/hot_set.h"
#include "cache/pin_registry.h"
#include "cache/reader_pool.h"
#include "cache/space_reserve.h"
#include "cache/sqlite_connection.h"
#include "cache/storage_problem.h"
#include "cache/store_totals.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {

struct StoredRow;  // store_rows.h
class BundleReader;  // bundle_reader.h

struct CacheStoreOptions {
  std::string path = "kiln-cache.sqlite";
  // False for tools that only look into an existing store: a missing file
  // fails with NotFound, and a database without kiln's schema with
  // InvalidArgument, instead of becoming a new empty store.
  bool create_if_missing = true;
  uint64_t max_bytes = 0;  // budget for stored (compressed) bytes; 0: none
  uint64_t hot_set_bytes = uint64_t{256} << 20;
  int zstd_level = kDefaultZstdLevel;
  int reader_connections = 4;
  // Per reader connection: page cache, and the part of the file read via
  // mmap (hit latency stays flat as the store grows; see the bench).
  int reader_cache_kib = 16 * 1024;
  int64_t reader_mmap_bytes = int64_t{1} << 30;
  int busy_timeout_ms = 5000;
  bool synchronous_full = false;  // see ConnectionOptions
  EvictionPolicy eviction = {};
  // Hit counts and times are buffered and written after this many hits or
  // this long since the last write (and before any eviction, listing or
  // close). Each write invalidates the readers' page caches, so frequent
  // writes slow hits on large stores (bench: 256 hits doubled p50 at 100k
  // entries).
  int hit_flush_interval = 4096;
  int64_t hit_flush_delay_ms = 10'000;
  // After this many puts in a process, a store without a dictionary tries
  // training one (kept only if it pays; see TrainDictionary). 0: never.
  int64_t dictionary_training_puts = 1000;
  // Room kept free beside the database for deletes on a full disk (see
  // above); 0: none.
  uint64_t reserve_bytes = uint64_t{8} << 20;
  // The compile log keeps the newest this many (tenant, name, chip, key) rows.
  int64_t compile_log_rows = 100'000;
  // The clock entries and records are stamped with (base/clock.h); the
  // system clock when unset.
  UnixClock clock = nullptr;
};

// A served entry: the verified executable and a pin that keeps the entry
// from being evicted while the caller uses it.
struct CacheHit {
  std::shared_ptr<const HotEntry> entry;
  EntryPin pin;
  bool from_memory = false;  // served by the hot set
};

// How List orders entries: by row id (stable across calls, not by age;
// page with ListFilter::after_row_id), or most hits, most compile seconds
// saved (hits x compile seconds), most stored bytes, or oldest first (these
// ignore after_row_id; ties by row id).
enum class ListOrder { kRowId, kHits, kSaved, kBytes, kAge };

// Entries come back in `order`; page the row id order with `after_row_id`
// = the last row id seen.
struct ListFilter {
  std::optional<std::string> tenant = std::nullopt;
  std::optional<std::string> chip = std::nullopt;
  std::optional<std::string> key_prefix = std::nullopt;  // hex
  bool quarantined_only = false;
  int64_t after_row_id = 0;  // for paging: rows with a larger id
  int limit = 1000;
  ListOrder order = ListOrder::kRowId;
};

// What the entries a filter picks add up to (tenant and chip are used;
// quarantined entries are counted apart and not in the hits).
struct EntrySummary {
  int64_t entries = 0;
  int64_t quarantined_entries = 0;
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;
  int64_t hits = 0;
  double compile_seconds_saved = 0;  // sum of hits x compile seconds
};

// Tuning records come back newest first; each field given must match.
struct TuningRecordFilter {
  std::optional<std::string> tenant = std::nullopt;
  std::optional<std::string> workload_key = std::nullopt;
  std::optional<std::string> chip = std::nullopt;
  std::optional<uint32_t> compiler_version = std::nullopt;
  int limit = 1000;
};

// One program a module name was compiled as (the compile_log table): what
// recompile diagnostics group by name.
struct CompileRecord {
  std::string tenant;
  std::string module_name;
  std::string chip;
  Hash128 key;
  std::string client;                   // the last compile's X-Kiln-Client; empty when none
  std::vector<std::string> parameters;  // entry parameter shapes ("f32[16,128]")
  // hlo::StructureHash of the module as sent, in hex ('' when unknown):
  // rows of one name are one program's variants only when it matches.
  std::string structure;
  std::string options;                  // canonical compile options ("plan=heuristic;topology=2x2")
  int64_t compiles = 1;
  double compile_seconds = 0;
  int64_t first_ms = 0;  // set by the store when 0
  int64_t last_ms = 0;
};

struct CompileRecordFilter {
  std::optional<std::string> tenant = std::nullopt;
  std::optional<std::string> module_name = std::nullopt;
  // Only programs (name, chip and structure) compiled as at least this many
  // keys.
  int min_keys = 1;
  int limit = 10000;  // rows
};

struct VerifyReport {
  int64_t checked = 0;
  int64_t ok = 0;
  int64_t already_quarantined = 0;
  std::vector<EntryMetadata> newly_quarantined;
  std::string integrity_check;  // PRAGMA integrity_check: "ok" when sound
};

struct EvictionReport {
  int64_t evicted = 0;
  uint64_t freed_bytes = 0;  // stored bytes of evicted entries
  int64_t skipped_pinned = 0;
};

struct StoreStats {
  int64_t entries = 0;
  int64_t quarantined_entries = 0;
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t file_bytes = 0;  // page_count * page_size
  uint64_t free_bytes = 0;  // freelist pages not yet returned
  uint64_t hot_bytes = 0;
  size_t hot_entries = 0;
  uint32_t dictionary_id = 0;  // used for new entries; 0: none
  // Since open:
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  int64_t misses = 0;
  int64_t puts = 0;
  // Persisted over the life of the file:
  int64_t quarantined_total = 0;
  int64_t evicted_total = 0;
};

struct Explanation {
  EntryMetadata nearest;
  std::vector<KeyComponent> nearest_components;
  int shared_components = 0;         // of all the query's components
  int module_components_shared = 0;  // parameters, entry body, called computations
  std::vector<std::string> differing;  // component names, see components.h
};

struct DictionaryReport {
  bool kept = false;
  std::string reason;
  size_t training_samples = 0;
  size_t holdout_samples = 0;
  uint64_t holdout_raw_bytes = 0;
  uint64_t holdout_bytes_without = 0;  // compressed without a dictionary
  uint64_t holdout_bytes_with = 0;     // compressed with the trained one
  uint32_t dictionary_id = 0;
};

// How an import files what it reads (CacheStore::ImportBundle).
struct ImportOptions {
  // Every entry and record goes to this tenant instead of the one it names
  // (`kiln inspect import --tenant`); must be a valid name.
  std::optional<std::string> tenant = std::nullopt;
  // A streamed import commits after about this many bytes (raw and
  // compressed) of entries, so a large bundle never holds the store's write
  // lock for long.
  uint64_t batch_bytes = uint64_t{64} << 20;
};

// Whether the store can write: `problem` is kReadOnly for a read-only
// store, kFull after the last write failed for lack of room (until one
// succeeds), else kNone; `message` says so for people (empty when all is
// well, and names a missing delete reserve).
struct StorageHealth {
  StorageProblem problem = StorageProblem::kNone;
  bool reserve_held = false;
  std::string message;
};

class CacheStore {
 public:
  // Opens or creates the file and migrates it to the latest schema.
  static Result<std::unique_ptr<CacheStore>> Open(CacheStoreOptions options);
  ~CacheStore();  // flushes buffered hit statistics

  // The entry for `id`, pinned; empty on a miss or when the stored copy
  // failed its checksum (now quarantined).
  Result<std::optional<CacheHit>> Get(const EntryId& id);

  // The entry for `id` only if the hot set holds it: never touches SQLite and never blocks on I/O, so an event loop may
  // call it. Null on a memory miss (the entry may still be on disk: Get).
  // With `count_hit` the hit is counted and buffered like Get's, but never
  // written here: `hit_stats_due` says the buffer is due, and the caller
  // should run FlushHitStats off the loop. Without it (a metadata-only
  // look, e.g. HEAD) nothing is counted. No pin is taken: the bytes are
  // shared and outlive an eviction.
  struct HotHit {
    std::shared_ptr<const HotEntry> entry;
    bool hit_stats_due = false;
  };
  HotHit TryGetHot(const EntryId& id, bool count_hit = true);

  // Stores (or replaces, clearing any quarantine) an executable, then
  // evicts if over budget. The put that reaches
  // `dictionary_training_puts` also runs TrainDictionary() once. Fails
  // with problem kFull on a full disk and kReadOnly on a read-only store
  // (StorageProblemOf): nothing is stored then.
  Status Put(const PutRequest& request);

  // Swaps a tuned executable in under the same key (cache_store_tuned.cc):
  // in one transaction, the entry for tuned.id is replaced by `tuned` only
  // if the executable stored there is still the one the tuner started from
  // (its EntryMetadata::checksum equals `expected_checksum`) and is not a
  // tuned one at least as fast (device_seconds). Otherwise nothing changes
  // and it fails: not_found when no servable entry is stored (none, or
  // quarantined), aborted (reason entry_changed) when other bytes are
  // stored now, failed_precondition (reason already_tuned) when a tuned
  // entry as fast is there; invalid_argument when `tuned` is not plan kind
  // tuned; kFull and kReadOnly like Put. Readers that already hold the old
  // entry (a CacheHit, pinned or not) keep its bytes whole; reads after the
  // swap get the new ones, from memory or disk. Key components and
  // request-body mappings stay unless `tuned` brings its own; the hit count
  // stays, and so does the compile time (what a hit saves): the tuning
  // run's time is `tuned.tune_seconds`; the totals follow the new sizes.
  Status ReplaceWithTuned(const PutRequest& tuned, uint64_t expected_checksum);

  // Entries deleted, quarantined or rewritten (bytes, plan, estimate,
  // options) since the last call, by any process on this store, this one
  // included (schema 0007 logs them by trigger, in the writer's
  // transaction); each is dropped from the hot set here. `everything` when
  // this process fell more than the log's 65536 rows behind: the hot set is
  // cleared, and callers should drop all they hold. The first call reports
  // changes since Open. Thread-safe; one SQLite read.
  struct Invalidations {
    std::vector<EntryId> ids;
    bool everything = false;
  };
  Result<Invalidations> TakeInvalidations();

  // The key stored for a raw request body hash, if any.
  Result<std::optional<Hash128>> LookupRequest(const std::string& tenant, const Hash128& request_hash,
                                               const std::string& chip, uint32_t format_version);

  // --- Inspection and maintenance (a CLI wraps these) ---
  Result<std::vector<EntryMetadata>> List(const ListFilter& filter);
  // Sums over the entries of filter.tenant and filter.chip (one scan of
  // the entries table; cache_store_summary.cc).
  Result<EntrySummary> Summarize(const ListFilter& filter);
  Result<std::optional<EntryMetadata>> GetMetadata(const EntryId& id);
  Result<std::vector<KeyComponent>> Components(const EntryId& id);
  // The HLO text the entry was compiled from (PutRequest::source_text), or
  // nullopt when the entry or its text is absent. Fails on a corrupt frame.
  Result<std::optional<std::string>> Source(const EntryId& id);
  // Reads and checks every entry, quarantining those that fail.
  Result<VerifyReport> VerifyAll();
  // Removes one entry. False when absent; an error when it is pinned. On a
  // full disk it releases the space reserve and tries again (kFull only if
  // even that is not enough); kReadOnly on a read-only store.
  Result<bool> Evict(const EntryId& id);
  // Evicts to the budget now (Put does this when over budget).
  Result<EvictionReport> EvictToBudget();
  Result<StoreStats> Stats();
  // Entry counts and bytes per namespace and chip, and the life counters,
  // from memory unless another connection committed since the last call
  // (see store_totals.h): no scan of the entries table.
  Result<std::shared_ptr<const StoreTotals>> Totals();
  // Whether writes are possible now, as this process last saw it. Memory
  // only (an event loop may call it); thread-safe.
  StorageHealth Health() const;
  Status FlushHitStats();

  // The stored entry of `tenant` and `format_version` nearest to
  // `components`, and what differs; empty when no entry shares any part of
  // the module. Nearest: the most module components shared (parameters,
  // entry body, called computations; options, target and module config
  // are shared by nearly every entry and do not count), then one for
  // `chip`, then one with the same options, then the newest. An entry for
  // another chip is a candidate, so a module cached only for v5e is found
  // when asked for v6e.
  Result<std::optional<Explanation>> Explain(const std::string& tenant, const std::string& chip,
                                             uint32_t format_version,
                                             const std::vector<KeyComponent>& components);
  // The `limit` nearest entries in Explain's order, best first.
  Result<std::vector<Explanation>> NearestEntries(const std::string& tenant, const std::string& chip,
                                                  uint32_t format_version,
                                                  const std::vector<KeyComponent>& components, size_t limit);

  // --- Compile log (cache_store_compile_log.cc) ---
  // Counts one compile of `record` (tenant, module name, chip, key): a new
  // row, or compiles, seconds, client and last_ms added to the one there.
  // Returns how many other keys the name had on that chip before with the
  // same structure (a recompile of the same program). Fails
  // like Put on a full disk or read-only store.
  Result<int64_t> RecordCompile(const CompileRecord& record);
  // Rows oldest first within each (tenant, name, chip), names in order.
  Result<std::vector<CompileRecord>> CompileRecords(const CompileRecordFilter& filter);

  // --- Tuning records (cache_store_tuning.cc) ---
  // Stores one record. Fails on an empty tenant, workload key or chip, or a
  // record with both or neither of a measured time and an error; on a full
  // disk or read-only store like Put (StorageProblemOf).
  Status AddTuningRecord(TuningRecord record);
  Result<std::vector<TuningRecord>> TuningRecords(const TuningRecordFilter& filter);
  // The fastest successful record of `tenant` for the subgraph on `chip`
  // measured by this compiler (kCompilerFormatVersion); empty when there is
  // none. Never another tenant's record, never an older compiler's.
  Result<std::optional<TuningRecord>> BestTuningRecord(const std::string& tenant, const std::string& workload_key,
                                                       const std::string& chip);
  // Record counts by tenant (for metrics; '' holds the records from before
  // records had tenants), in tenant order.
  Result<std::map<std::string, int64_t>> TuningRecordCounts();
  // Deletes every record of `tenant`; returns how many there were. Works on
  // a full disk like Evict.
  Result<int64_t> DeleteTuningRecords(const std::string& tenant);

  // --- Bundles (cache_store_bundle.cc, format in bundle.h) ---
  // The servable entries (and the tuning records) `selection` picks, each
  // executable read and checked like a hit (a corrupt one is quarantined
  // and counted in report.skipped_corrupt, not exported); no hit is
  // counted. Entries go to `sink` one at a time (oldest row first), then
  // the records, oldest first.
  Status ExportBundle(const BundleSelection& selection, const BundleSink& sink, BundleReport& report);
  // The same, collected in memory (schema version: CurrentSchemaVersion()).
  Result<Bundle> ExportBundle(const BundleSelection& selection, BundleReport& report);
  // Writes a decoded (so already verified) bundle in one transaction: an
  // entry absent (or quarantined) here is stored with its metadata and
  // creation time (hits start at 0), its bundle frame kept as it is; one
  // stored with the same checksum is counted present; one stored with other
  // bytes is kept and counted a conflict. A record identical to a stored
  // one is counted present. A bundle's request-body hashes are never
  // written (bundle.h). Nothing is written when it fails (kFull, kReadOnly
  // like Put).
  Result<BundleReport> ImportBundle(const Bundle& bundle, const ImportOptions& options = {});
  // The same, streamed from `reader` in transactions of
  // options.batch_bytes: memory holds one batch. An error (a damaged item,
  // a full disk) stops it, keeping the batches already committed, and says
  // how many entries came in before; callers that want all or nothing read
  // the bundle through once first (BundleReader).
  Result<BundleReport> ImportBundle(BundleReader& reader, const ImportOptions& options = {});

  // Trains a zstd dictionary on up to `max_samples` stored executables and
  // keeps it (for new entries) only when it shrinks a held-out fifth of
  // them by at least `min_gain` (0.05 = 5%) over plain zstd.
  Result<DictionaryReport> TrainDictionary(size_t max_samples = 2000, double min_gain = 0.05);

  const CacheStoreOptions& options() const { return options_; }

 private:
  struct PendingHit {
    int64_t count = 0;
    int64_t last_ms = 0;
  };
  explicit CacheStore(CacheStoreOptions options);
  int64_t Now() const;

  // Reads and verifies one entry from SQLite; quarantines it on mismatch.
  Result<std::shared_ptr<const HotEntry>> ReadVerified(const EntryId& id);
  // An entry ready to write: its metadata and compressed bytes (the raw
  // bytes are copied in only once it is written).
  struct PreparedEntry {
    std::shared_ptr<HotEntry> entry;
    std::string frame;
    std::string source_frame;  // empty: no source text kept
  };
  // Checks the request and compresses it (outside the writer lock).
  Result<PreparedEntry> PrepareEntry(const PutRequest& request);
  // cache_store_bundle.cc: an imported entry ready to write, and one
  // transaction of an import (its counts added to `report`).
  Result<PreparedEntry> PrepareImported(const BundleEntry& entry, const ImportOptions& options);
  Status ImportBatch(std::span<const BundleEntry> entries, std::span<const TuningRecord> records,
                     const ImportOptions& options, BundleReport& report);
  Status StoreEntry(const PutRequest& request);
  // The entry's rows, in the caller's transaction: entry, bytes, key
  // components (kept as they are when `keep_components` and the request has
  // none), the source text when there is one, and the request-body mapping.
  // Sets prepared.entry->metadata's row_id and hit_count.
  Status WriteEntryRowsLocked(const PutRequest& request, PreparedEntry& prepared, bool keep_components);
  Status WriteRequestKeyLocked(const PutRequest& request);
  // After a committed write: storage health, the byte estimate, the hot set
  // (the new bytes replace any old ones) and the budget.
  void PublishEntryLocked(const PutRequest& request, std::shared_ptr<HotEntry> entry);
  // cache_store_storage.cc: read-only detection and the reserve (at Open),
  // and the classification of a failed write (callers hold writer_mutex_
  // and cleared the writer's last failure before the write).
  Status CheckStorage();
  Error ReadOnlyError() const;
  Error WriteFailureLocked(const Error& error);
  void WriteSucceededLocked();
  void RefillReserveLocked();
  // Runs `erase` (a delete in its own transaction, returning what it
  // deleted) and, when the disk is full, releases the space reserve and
  // runs it once more. The caller classifies a failure (WriteFailureLocked).
  Result<int64_t> DeleteWithReserveLocked(const std::function<Result<int64_t>()>& erase);
  // Decodes and checks a row; the error says what is wrong with it.
  Result<std::string> DecodeRow(const StoredRow& row);
  Result<std::shared_ptr<const ZstdDictionary>> DictionaryById(uint32_t id);
  Status Quarantine(int64_t row_id, uint64_t checksum);
  void RecordHit(const EntryMetadata& metadata);
  // Buffers one hit; true when the buffer is due to be written.
  bool BufferHit(const EntryMetadata& metadata);

  // Callers hold writer_mutex_.
  Status FlushHitStatsLocked();
  Result<EvictionReport> EvictToBudgetLocked();
  Status BumpCounterLocked(const char* name, int64_t delta);
  Status LoadDictionariesLocked();

  CacheStoreOptions options_;
  std::mutex writer_mutex_;
  std::unique_ptr<Connection> writer_;
  std::unique_ptr<ReaderPool> readers_;
  std::unique_ptr<TotalsReader> totals_;
  std::string db_file_;                    // the file behind options_.path (a URI)
  bool read_only_ = false;                 // set at Open
  std::unique_ptr<SpaceReserve> reserve_;  // used under writer_mutex_
  std::atomic<bool> reserve_held_ = false;  // as last refilled or released
  std::atomic<StorageProblem> storage_problem_ = StorageProblem::kNone;
  // Stored bytes as this process last counted them (guarded by
  // writer_mutex_); other processes' writes show up at the next recount.
  uint64_t approx_stored_bytes_ = 0;
  HotSet hot_set_;
  std::shared_ptr<PinRegistry> pins_ = PinRegistry::Create();
  std::mutex invalidations_mutex_;
  int64_t invalidations_seen_ = 0;  // last invalidations.seq taken; guarded by invalidations_mutex_

  std::mutex dictionaries_mutex_;
  std::unordered_map<uint32_t, std::shared_ptr<const ZstdDictionary>> dictionaries_;
  std::shared_ptr<const ZstdDictionary> active_dictionary_;

  std::mutex hits_mutex_;
  std::unordered_map<int64_t, PendingHit> pending_hits_;  // by row id
  int64_t pending_hit_total_ = 0;
  int64_t last_hit_flush_ms_ = 0;

  std::atomic<int64_t> memory_hits_ = 0;
  std::atomic<int64_t> disk_hits_ = 0;
  std::atomic<int64_t> misses_ = 0;
  std::atomic<int64_t> puts_ = 0;
  std::atomic<bool> dictionary_attempted_ = false;
};

}  // namespace kiln::cache
