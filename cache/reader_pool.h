// A small pool of read-only SQLite connections for concurrent readers.
//
// Acquire() hands out an idle connection (opening one lazily, up to
// `max_connections`) and blocks while all are in use. The lease returns its
// connection when destroyed. With WAL, readers never block the writer and
// see the last committed state.
//
// Thread-safe. Leases must not outlive the pool.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/sqlite_connection.h"

namespace kiln::cache {

class ReaderPool;

class ReaderLease {
 public:
  ReaderLease(ReaderLease&& other) noexcept;
  ReaderLease& operator=(ReaderLease&&) = delete;
  ~ReaderLease();
  Connection& operator*() const { return *connection_; }
  Connection* operator->() const { return connection_.get(); }

 private:
  friend class ReaderPool;
  ReaderLease(ReaderPool* pool, std::unique_ptr<Connection> connection)
      : pool_(pool), connection_(std::move(connection)) {}
  ReaderPool* pool_;
  std::unique_ptr<Connection> connection_;
};

class ReaderPool {
 public:
  // `options.read_only` is forced on.
  ReaderPool(std::string path, int max_connections, ConnectionOptions options);

  // An idle connection; fails only when a new connection cannot be opened.
  Result<ReaderLease> Acquire();

 private:
  friend class ReaderLease;
  void Return(std::unique_ptr<Connection> connection);

  const std::string path_;
  const int max_connections_;
  const ConnectionOptions options_;
  std::mutex mutex_;
  std::condition_variable idle_available_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int open_ = 0;  // idle + leased
};

}  // namespace kiln::cache
