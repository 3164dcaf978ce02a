#include "cache/sqlite_connection.h"

#include <filesystem>
#include <utility>

namespace kiln::cache {
namespace {

// The code of a failed SQLite call's result code.
ErrorCode SqliteCode(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_IOERR:
      return ErrorCode::kDataLoss;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG:
      return ErrorCode::kResourceExhausted;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
      return ErrorCode::kUnavailable;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return ErrorCode::kPermissionDenied;
    case SQLITE_CONSTRAINT:
      return ErrorCode::kFailedPrecondition;
    case SQLITE_INTERRUPT:
      return ErrorCode::kCancelled;
    default:
      return ErrorCode::kInternal;
  }
}

Error SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message = "sqlite: ";
  message += what;
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Error::Coded(SqliteCode(rc), std::move(message));
}

}  // namespace

Statement::Statement(sqlite3_stmt* stmt, Connection* connection) : stmt_(stmt), connection_(connection) {}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), connection_(other.connection_), bind_error_(other.bind_error_) {}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindText(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindBlob(int index, std::string_view bytes) {
  // A zero-length blob must still be a blob, not NULL.
  static constexpr char kEmpty = 0;
  const char* data = bytes.empty() ? &kEmpty : bytes.data();
  int rc = sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Status Statement::Failed(int rc) const {
  connection_->NoteFailure(rc);
  std::string what = "step \"";
  what += sqlite3_sql(stmt_);
  what += "\"";
  return SqliteError(connection_->raw(), rc, what);
}

Result<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) {
    return InternalError(std::string("sqlite: bind for \"") + sqlite3_sql(stmt_) +
                         "\": " + sqlite3_errstr(bind_error_));
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return std::unexpected(Failed(rc).error());
}

Status Statement::Run() {
  while (true) {
    auto row = Step();
    if (!row || !*row) {
      sqlite3_reset(stmt_);  // ready to be bound and run again
      if (!row) return std::unexpected(row.error());
      return Ok();
    }
  }
}

void Statement::Reset() { sqlite3_reset(stmt_); }

int64_t Statement::ColumnInt(int index) const { return sqlite3_column_int64(stmt_, index); }
double Statement::ColumnDouble(int index) const { return sqlite3_column_double(stmt_, index); }
bool Statement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string_view Statement::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, index))};
}

std::string_view Statement::ColumnBlob(int index) const {
  const void* blob = sqlite3_column_blob(stmt_, index);
  if (blob == nullptr) return {};
  return {static_cast<const char*>(blob), static_cast<size_t>(sqlite3_column_bytes(stmt_, index))};
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path,
                                                     const ConnectionOptions& options) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_URI;
  flags |= options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (!options.read_only && options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK && (rc & 0xff) == SQLITE_CANTOPEN && !options.create_if_missing &&
      !path.starts_with("file:") && !std::filesystem::exists(path)) {
    sqlite3_close_v2(db);
    return NotFoundError("no database at " + path + " (it is not created here)");
  }
  if (rc != SQLITE_OK) {
    auto error = SqliteError(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return error;
  }
  std::unique_ptr<Connection> connection(new Connection(db));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  Status configured = connection->Configure(options);
  if (!configured) return configured.error().WithContext("open " + path);
  return connection;
}

Status Connection::Configure(const ConnectionOptions& options) {
  // journal_mode=WAL is persistent in the file; readers just check it.
  if (!options.read_only) {
    KILN_ASSIGN_OR_RETURN(auto mode, Prepare("PRAGMA journal_mode=WAL"));
    KILN_ASSIGN_OR_RETURN(bool row, mode.Step());
    if (!row || mode.ColumnText(0) != "wal") return InternalError("sqlite: could not switch to WAL mode");
  }
  KILN_RETURN_IF_ERROR(Execute(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  KILN_RETURN_IF_ERROR(Execute("PRAGMA cache_size=-" + std::to_string(options.cache_kib)));
  KILN_RETURN_IF_ERROR(Execute("PRAGMA mmap_size=" + std::to_string(options.mmap_bytes)));
  return Execute("PRAGMA foreign_keys=ON");
}

Connection::~Connection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status Connection::Execute(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Ok();
  NoteFailure(sqlite3_extended_errcode(db_));
  std::string error = "sqlite: exec \"" + text.substr(0, 80) + "\": ";
  error += message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return Error::Coded(SqliteCode(rc), std::move(error));
}

Result<Statement> Connection::Prepare(std::string_view sql) {
  std::string key(sql);
  auto it = statements_.find(key);
  if (it != statements_.end()) return Statement(it->second, this);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                              &stmt, nullptr);
  if (rc != SQLITE_OK) {
    NoteFailure(rc);
    return SqliteError(db_, rc, "prepare \"" + key + "\"");
  }
  statements_.emplace(std::move(key), stmt);
  return Statement(stmt, this);
}

Result<int64_t> Connection::QueryInt(std::string_view sql) {
  KILN_ASSIGN_OR_RETURN(auto statement, Prepare(sql));
  KILN_ASSIGN_OR_RETURN(bool row, statement.Step());
  if (!row) return InternalError("sqlite: \"" + std::string(sql) + "\" returned no row");
  return statement.ColumnInt(0);
}

void Connection::RollBack() {
  // SQLite may have rolled back already (SQLITE_FULL can end the
  // transaction); the failure that got us here stays the one reported.
  if (sqlite3_get_autocommit(db_) != 0) return;
  const int failure = last_failure_;
  (void)Execute("ROLLBACK");
  last_failure_ = failure;
}

bool Connection::read_only() const { return sqlite3_db_readonly(db_, "main") == 1; }

int64_t Connection::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
int Connection::Changes() const { return sqlite3_changes(db_); }

Result<Transaction> Transaction::Begin(Connection& connection) {
  KILN_RETURN_IF_ERROR(connection.Execute("BEGIN IMMEDIATE"));
  return Transaction(&connection);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)) {}

Transaction::~Transaction() {
  if (connection_ != nullptr) connection_->RollBack();
}

Status Transaction::Commit() {
  Connection* connection = std::exchange(connection_, nullptr);
  if (connection == nullptr) return InternalError("sqlite: commit of a finished transaction");
  Status status = connection->Execute("COMMIT");
  if (!status) connection->RollBack();
  return status;
}

}  // namespace kiln::cache
