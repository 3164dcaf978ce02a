// A thin RAII layer over SQLite's C API: one connection, its cache of
// prepared statements, and transactions.
//
// A Connection owns its sqlite3 handle and every statement it prepared;
// Prepare() returns a Statement that borrows a cached sqlite3_stmt and
// resets it when it goes out of scope, so each SQL text is compiled once
// per connection. Errors are values carrying SQLite's message and the SQL.
//
// The path may be a SQLite URI ("file:/var/cache/kiln.db?mode=ro"), which
// can open the file read-only or through another VFS.
//
// Thread-compatible: a Connection (and its Statements) must be used by one
// thread at a time; the store gives each thread its own connection or
// serializes access with a mutex. Statements must not outlive their
// Connection, and only one Statement per SQL text may be live at a time
// (they share the cached sqlite3_stmt).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

namespace kiln::cache {

class Connection;

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();  // resets the statement and clears its bindings

  // Parameters are 1-based. A bind error is reported by the next Step().
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& BindText(int index, std::string_view text);  // copied by SQLite
  Statement& BindBlob(int index, std::string_view bytes);  // copied by SQLite
  Statement& BindNull(int index);

  // Advances: true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion, ignoring rows (INSERT/UPDATE/DELETE), then resets
  // so the statement can be bound and run again.
  Status Run();
  void Reset();  // after Step(): ready to bind and step again

  // Columns are 0-based; views are valid until the next Step() or reset.
  int64_t ColumnInt(int index) const;
  double ColumnDouble(int index) const;
  bool ColumnIsNull(int index) const;
  std::string_view ColumnText(int index) const;
  std::string_view ColumnBlob(int index) const;

 private:
  friend class Connection;
  Statement(sqlite3_stmt* stmt, Connection* connection);
  Status Failed(int rc) const;

  sqlite3_stmt* stmt_;
  Connection* connection_;
  int bind_error_ = SQLITE_OK;
};

struct ConnectionOptions {
  bool read_only = false;
  // A writable connection creates a missing file unless this is false; a
  // missing file then fails with NotFound.
  bool create_if_missing = true;
  int busy_timeout_ms = 5000;
  // WAL with synchronous=NORMAL survives a process crash; FULL also
  // survives power loss at one fsync per commit.
  bool synchronous_full = false;
  // Page cache per connection, and how much of the file to read through
  // mmap (0: none), which saves a system call per page on large stores.
  int cache_kib = 8 * 1024;
  int64_t mmap_bytes = 0;
};

class Connection {
 public:
  // Opens (creating when writable) `path` in WAL mode with a busy timeout
  // and foreign keys on. Fails with SQLite's message when the file cannot
  // be opened or is not a database.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path,
                                                  const ConnectionOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more ';'-separated statements without results.
  Status Execute(std::string_view sql);
  // A cached prepared statement for `sql` (compiled on first use).
  Result<Statement> Prepare(std::string_view sql);
  // Runs a query whose first row's first column is an integer.
  Result<int64_t> QueryInt(std::string_view sql);

  int64_t LastInsertRowId() const;
  int Changes() const;
  sqlite3* raw() const { return db_; }
  // True when SQLite opened the file read-only (a read-only URI, file or
  // file system), whatever the options asked for.
  bool read_only() const;

  // The (extended) result code of the last failed call on this connection
  // since ClearLastFailure(), or SQLITE_OK; unlike sqlite3_errcode it
  // survives later successful calls (a ROLLBACK after the failure), so a
  // caller can tell why a transaction failed (SQLITE_FULL, SQLITE_READONLY).
  int last_failure() const { return last_failure_; }
  void ClearLastFailure() { last_failure_ = SQLITE_OK; }

  // Rolls back the open transaction, if any, keeping last_failure().
  void RollBack();

 private:
  friend class Statement;
  explicit Connection(sqlite3* db) : db_(db) {}
  Status Configure(const ConnectionOptions& options);
  void NoteFailure(int rc) { last_failure_ = rc; }

  sqlite3* db_;
  int last_failure_ = SQLITE_OK;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

// BEGIN IMMEDIATE on construction; rolls back unless Commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> Begin(Connection& connection);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit();

 private:
  explicit Transaction(Connection* connection) : connection_(connection) {}
  Connection* connection_;  // null once committed or moved from
};

}  // namespace kiln::cache
