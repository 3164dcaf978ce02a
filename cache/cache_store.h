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
// Writes: every write goes through the store's one write path
// (store_writer.h), which owns the writer connection, its lock and the
// classification of failures. The compile log (compile_log.h), the tuning
// records (tuning_records.h) and bundle export and import
// (bundle_transfer.h) are classes over it, reached through the store.
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
#include "cache/bundle_transfer.h"
#include "cache/compile_log.h"
#include "cache/entry.h"
#include "cache/eviction_policy.h"
#include "cache/hot_set.h"
#include "cache/pin_registry.h"
#include "cache/reader_pool.h"
#include "cache/space_reserve.h"
#include "cache/sqlite_connection.h"
#include "cache/storage_problem.h"
#include "cache/store_rows.h"
#include "cache/store_totals.h"
#include "cache/store_writer.h"
#include "cache/tuning_records.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {

// Where a store lives unless told otherwise: `kiln serve`, `kiln prewarm
// --db`, `kiln tune --db` and `kiln inspect` all default to it (KILN_DB
// overrides it for each).
inline constexpr std::string_view kDefaultStorePath = "./kiln.db";

struct CacheStoreOptions {
  std::string path = std::string(kDefaultStorePath);
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
  Result<StoreStats> Stats();
  // Entry counts and bytes per namespace and chip, and the life counters,
  // from memory unless another connection committed since the last call
  // (see store_totals.h): no scan of the entries table.
  Result<std::shared_ptr<const StoreTotals>> Totals();
  // Whether writes are possible now, as this process last saw it. Memory
  // only (an event loop may call it); thread-safe.
  StorageHealth Health() const { return writer_->Health(); }
  Status FlushHitStats();

  // The `limit` stored entries of `tenant` and `format_version` nearest to
  // `components`, best first, and what differs; none when no entry shares
  // any part of the module. Nearest: the most module components shared
  // (parameters, entry body, called computations; options, target and
  // module config are shared by nearly every entry and do not count), then
  // one for `chip`, then one with the same options, then the newest. An
  // entry for another chip is a candidate, so a module cached only for v5e
  // is found when asked for v6e.
  Result<std::vector<Explanation>> NearestEntries(const std::string& tenant, const std::string& chip,
                                                  uint32_t format_version,
                                                  const std::vector<KeyComponent>& components, size_t limit);

  // The compile log, the tuning records, and bundle export and import:
  // classes over the store's write path, owned by the store.
  CompileLog& compile_log() { return *compile_log_; }
  TuningRecords& tuning_records() { return *tuning_records_; }
  BundleTransfer& bundles() { return *bundles_; }

  // Trains a zstd dictionary on up to `max_samples` stored executables and
  // keeps it (for new entries) only when it shrinks a held-out fifth of
  // them by at least `min_gain` (0.05 = 5%) over plain zstd.
  Result<DictionaryReport> TrainDictionary(size_t max_samples = 2000, double min_gain = 0.05);

  const CacheStoreOptions& options() const { return options_; }
  // The clock the store stamps entries and records with (options.clock, or
  // the system clock): the one callers should stamp with too.
  int64_t Now() const { return options_.clock(); }

 private:
  friend class BundleTransfer;  // reads verified entries, files imported ones
  struct PendingHit {
    int64_t count = 0;
    int64_t last_ms = 0;
  };
  explicit CacheStore(CacheStoreOptions options);

  // Reads and verifies one entry from SQLite; quarantines it on mismatch.
  Result<std::shared_ptr<const HotEntry>> ReadVerified(const EntryId& id);
  // Checks the request and compresses it (outside the writer lock).
  Result<PreparedEntry> PrepareEntry(const PutRequest& request);
  Status StoreEntry(const PutRequest& request);
  // After a committed write of `request` (under the writer lock): the byte
  // estimate, the hot set (the new bytes replace any old ones) and the
  // budget.
  void PublishEntryLocked(Connection& writer, const PutRequest& request, std::shared_ptr<HotEntry> entry);
  // After a committed write that added `stored_bytes` (under the writer
  // lock): evicts when the estimate is over the budget.
  void AddedBytesLocked(Connection& writer, uint64_t stored_bytes);
  // Decodes and checks a row; the error says what is wrong with it.
  Result<std::string> DecodeRow(const StoredRow& row);
  Result<std::shared_ptr<const ZstdDictionary>> DictionaryById(uint32_t id);
  Status Quarantine(int64_t row_id, uint64_t checksum);
  void RecordHit(const EntryMetadata& metadata);
  // Buffers one hit; true when the buffer is due to be written.
  bool BufferHit(const EntryMetadata& metadata);

  // Callers hold the writer lock (StoreWriter::Locked, or inside a write).
  Status FlushHitStatsLocked(Connection& writer);
  Result<EvictionReport> EvictToBudgetLocked(Connection& writer);
  Status LoadDictionariesLocked(Connection& writer);

  CacheStoreOptions options_;
  std::unique_ptr<StoreWriter> writer_;
  std::unique_ptr<ReaderPool> readers_;
  std::unique_ptr<TotalsReader> totals_;
  std::unique_ptr<CompileLog> compile_log_;
  std::unique_ptr<TuningRecords> tuning_records_;
  std::unique_ptr<BundleTransfer> bundles_;
  // Stored bytes as this process last counted them (guarded by the writer
  // lock); other processes' writes show up at the next recount.
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
