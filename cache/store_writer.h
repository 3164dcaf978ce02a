// StoreWriter: the cache store's one write path.
//
// Owns the store's writer connection, the mutex that serializes its writes
// in this process, what the last write said about the disk (full, read-only)
// and the delete reserve: a file of `reserve_bytes` beside the database,
// kept allocated while there is room and released when a delete finds the
// disk full, so entries can always be deleted to make room.
//
// Every write that counts goes through Write or Delete, which own the
// protocol: take the lock, run the store's pre-write step (its buffered hit
// counts), clear the connection's last failure, run the body in one
// BEGIN IMMEDIATE transaction and commit; then record the outcome. A
// failure rolls the transaction back and comes back classified by
// StorageProblemOf: kFull and kReadOnly (remembered for Health until a write
// succeeds), kBusy (another process held the lock past the busy timeout;
// retry), or the body's own error. On success the remembered problem clears,
// the reserve is refilled, and `after` runs still under the lock (the
// caller's in-memory bookkeeping, which must not interleave with another
// write).
//
// Locked runs anything else under the writer lock outside the protocol:
// advisory writes whose failure is not the store's health (hit counts,
// quarantine marks, dictionaries) and reads that need the writer's view.
//
// Thread-safe. Bodies run with the lock held: they must not call back into
// the StoreWriter.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "cache/space_reserve.h"
#include "cache/sqlite_connection.h"
#include "cache/storage_problem.h"

namespace kiln::cache {

// Whether the store can write: `problem` is kReadOnly for a read-only
// store, kFull after the last write failed for lack of room (until one
// succeeds), else kNone; `message` says so for people (empty when all is
// well, and names a missing delete reserve).
struct StorageHealth {
  StorageProblem problem = StorageProblem::kNone;
  bool reserve_held = false;
  std::string message;
};

class StoreWriter {
 public:
  // Takes the store's writer connection, migrated or not; `path` is the
  // store's path as given (a URI names its file in messages). A read-only
  // connection makes a read-only writer: every Write and Delete fails with
  // kReadOnly. `busy_timeout_ms` is the connection's, for messages.
  static Result<std::unique_ptr<StoreWriter>> Create(std::unique_ptr<Connection> connection, const std::string& path,
                                                     uint64_t reserve_bytes, int busy_timeout_ms);

  using Body = std::function<Status(Connection&)>;
  using After = std::function<void(Connection&)>;

  // The write protocol above. `body` runs inside the transaction.
  Status Write(const Body& body, const After& after = nullptr);
  // The same for a delete: `erase` returns how many rows it deleted, which
  // Delete returns. On a full disk the reserve is released and `erase` runs
  // once more in a new transaction before the failure is reported.
  Result<int64_t> Delete(const std::function<Result<int64_t>(Connection&)>& erase, const After& after = nullptr);

  // `f(connection)` under the writer lock, outside the protocol; returns
  // what `f` returns.
  template <typename F>
  auto Locked(F&& f) {
    std::lock_guard lock(mu_);
    return f(*connection_);
  }
  // The same when the lock is free now; false (and `f` not run) when
  // another write holds it. For advisory work a reader must not wait for.
  template <typename F>
  bool TryLocked(F&& f) {
    std::unique_lock lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    f(*connection_);
    return true;
  }

  // Runs first in every Write and Delete, under the lock, before the
  // transaction begins; its failure is ignored. Set once, before writes.
  void set_pre_write(std::function<void(Connection&)> step) { pre_write_ = std::move(step); }

  bool read_only() const { return read_only_; }
  // Ok, or the read-only error (for callers that check before costly work).
  Status CheckWritable() const;
  Error ReadOnlyError() const;
  // As this process last saw it; memory only (an event loop may call it).
  StorageHealth Health() const;
  // The database file (not the URI).
  const std::string& file() const { return file_; }

 private:
  StoreWriter(std::unique_ptr<Connection> connection, std::string file, int busy_timeout_ms, bool read_only);
  // One transaction of `body`, the connection's last failure cleared first.
  Status Transact(const Body& body);
  // Callers hold mu_: the error of a failed write, classified, and the
  // problem remembered; a success clears it and refills the reserve.
  Error Failed(const Error& error);
  void Succeeded();

  std::unique_ptr<Connection> connection_;
  const std::string file_;
  const int busy_timeout_ms_;
  const bool read_only_;
  uint64_t reserve_bytes_ = 0;
  std::unique_ptr<SpaceReserve> reserve_;  // used under mu_
  std::function<void(Connection&)> pre_write_;
  std::mutex mu_;
  std::atomic<bool> reserve_held_ = false;  // as last refilled or released
  std::atomic<StorageProblem> problem_ = StorageProblem::kNone;
};

}  // namespace kiln::cache
