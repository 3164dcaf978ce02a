// Entry counts and bytes per namespace and chip, and the store's life
// counters, without scanning the entries table.
//
// The figures live in the file (table entry_totals, kept by triggers in the
// same transaction as every entry write, see 0004_entry_totals.sql; and the
// counters table), so they are exact after a crash and whichever process
// wrote. A TotalsReader keeps the last figures it read in memory with the
// file's PRAGMA data_version at that moment, and reads them again only
// when the version moved, i.e. when another connection (this process's
// writer, or another process such as `kiln inspect evict`) committed since.
// An unchanged store costs one data_version check (the WAL index in shared
// memory; no file I/O) per call.
//
// Thread-safe: calls are serialized by a mutex; snapshots are immutable and
// shared. Fails only when SQLite does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "cache/sqlite_connection.h"

namespace kiln::cache {

struct EntryCount {
  int64_t entries = 0;
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;

  void Add(const EntryCount& other) {
    entries += other.entries;
    raw_bytes += other.raw_bytes;
    stored_bytes += other.stored_bytes;
  }
  bool operator==(const EntryCount&) const = default;
};

struct NamespaceTotals {
  EntryCount live;         // servable entries
  EntryCount quarantined;  // failed their checksum: kept, never served
  std::map<std::string, EntryCount> live_by_chip;

  bool operator==(const NamespaceTotals&) const = default;
};

struct StoreTotals {
  std::map<std::string, NamespaceTotals> by_tenant;
  NamespaceTotals all;  // every tenant
  // Over the life of the file:
  int64_t evicted_total = 0;
  int64_t quarantined_total = 0;

  // The totals of `tenant`'s namespace (zero when it has no entries).
  const NamespaceTotals& Of(const std::string& tenant) const;
};

class TotalsReader {
 public:
  // A read-only connection of its own to `path`.
  static Result<std::unique_ptr<TotalsReader>> Open(const std::string& path, const ConnectionOptions& options);

  // The current figures: the memory copy, or read again when another
  // connection committed since it was read.
  Result<std::shared_ptr<const StoreTotals>> Current();

  // Recounts from the entries table itself (a full scan), for checking the
  // running totals in tests and `kiln inspect verify`.
  static Result<StoreTotals> Recount(Connection& connection);

 private:
  explicit TotalsReader(std::unique_ptr<Connection> connection) : connection_(std::move(connection)) {}
  Result<std::shared_ptr<const StoreTotals>> Load();

  std::mutex mutex_;
  std::unique_ptr<Connection> connection_;       // guarded by mutex_
  int64_t data_version_ = -1;                    // guarded by mutex_
  std::shared_ptr<const StoreTotals> snapshot_;  // guarded by mutex_
};

}  // namespace kiln::cache
