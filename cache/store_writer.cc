#include "cache/store_writer.h"

#include <sqlite3.h>

namespace kiln::cache {
namespace {

StorageProblem ProblemOf(int result_code) {
  switch (result_code & 0xff) {
    case SQLITE_FULL:
      return StorageProblem::kFull;
    case SQLITE_READONLY:
      return StorageProblem::kReadOnly;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StorageProblem::kBusy;
    default:
      return StorageProblem::kNone;
  }
}

}  // namespace

StoreWriter::StoreWriter(std::unique_ptr<Connection> connection, std::string file, int busy_timeout_ms,
                         bool read_only)
    : connection_(std::move(connection)),
      file_(std::move(file)),
      busy_timeout_ms_(busy_timeout_ms),
      read_only_(read_only) {}

Result<std::unique_ptr<StoreWriter>> StoreWriter::Create(std::unique_ptr<Connection> connection,
                                                         const std::string& path, uint64_t reserve_bytes,
                                                         int busy_timeout_ms) {
  if (connection == nullptr) return InvalidArgumentError("cache: a store writer needs a connection");
  const char* file = sqlite3_db_filename(connection->raw(), "main");
  std::string db_file = file != nullptr && *file != '\0' ? file : path;
  sqlite3_vfs* vfs = nullptr;
  if (sqlite3_file_control(connection->raw(), "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || vfs == nullptr) {
    vfs = sqlite3_vfs_find(nullptr);
  }
  const bool read_only = connection->read_only();
  std::unique_ptr<StoreWriter> writer(new StoreWriter(std::move(connection), db_file, busy_timeout_ms, read_only));
  writer->reserve_bytes_ = reserve_bytes;
  writer->reserve_ = std::make_unique<SpaceReserve>(db_file + "-reserve", reserve_bytes, vfs);
  // On a disk already full the store still opens and serves what it holds
  // (Health says the reserve is missing); writes fail as kFull until there
  // is room.
  if (!read_only) writer->reserve_held_.store(writer->reserve_->Refill());
  return writer;
}

Status StoreWriter::Transact(const Body& body) {
  connection_->ClearLastFailure();
  KILN_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*connection_));
  KILN_RETURN_IF_ERROR(body(*connection_));
  return transaction.Commit();
}

Status StoreWriter::Write(const Body& body, const After& after) {
  KILN_RETURN_IF_ERROR(CheckWritable());
  std::lock_guard lock(mu_);
  if (pre_write_) pre_write_(*connection_);
  if (Status written = Transact(body); !written) return Failed(written.error());
  Succeeded();
  if (after) after(*connection_);
  return Ok();
}

Result<int64_t> StoreWriter::Delete(const std::function<Result<int64_t>(Connection&)>& erase, const After& after) {
  KILN_RETURN_IF_ERROR(CheckWritable());
  std::lock_guard lock(mu_);
  if (pre_write_) pre_write_(*connection_);
  int64_t erased = 0;
  const Body body = [&](Connection& connection) -> Status {
    KILN_ASSIGN_OR_RETURN(erased, erase(connection));
    return Ok();
  };
  Status deleted = Transact(body);
  // A delete needs room for its journal: on a full disk, give it the reserve.
  if (!deleted && ProblemOf(connection_->last_failure()) == StorageProblem::kFull && reserve_->Release()) {
    reserve_held_.store(false);
    deleted = Transact(body);
  }
  if (!deleted) return std::unexpected(Failed(deleted.error()));
  Succeeded();
  if (after) after(*connection_);
  return erased;
}

Status StoreWriter::CheckWritable() const {
  if (read_only_) return ReadOnlyError();
  return Ok();
}

Error StoreWriter::ReadOnlyError() const {
  return UnavailableError("the cache database " + file_ +
                          " is read-only (a mode=ro URI, or a file or file system kiln may not "
                          "write): nothing can be stored or deleted")
      .WithReason(std::string(kStoreReadOnly));
}

Error StoreWriter::Failed(const Error& error) {
  const int failure = connection_->last_failure();
  const StorageProblem problem = ProblemOf(failure);
  if (problem == StorageProblem::kNone) return error;
  if (problem == StorageProblem::kBusy) {
    // Passing: the store's health is unchanged, the next write may succeed.
    return UnavailableError("the cache database " + file_ + " stayed locked by another connection for " +
                            std::to_string(busy_timeout_ms_) + " ms (" + sqlite3_errstr(failure) + "): retry later")
        .WithReason(std::string(kStoreBusy))
        .RetryAfter(1);
  }
  problem_.store(problem);
  if (problem == StorageProblem::kReadOnly) return ReadOnlyError();
  return ResourceExhaustedError("the disk holding the cache database " + file_ + " is full (" +
                                sqlite3_errstr(failure) +
                                "): free space there, or delete entries (DELETE /v1/executables/KEY, "
                                "kiln inspect evict)")
      .WithReason(std::string(kStorageFull));
}

void StoreWriter::Succeeded() {
  problem_.store(StorageProblem::kNone);
  // Room again: take back the reserve a delete on a full disk released
  // (only a stat while it is held).
  reserve_held_.store(reserve_->Refill());
}

StorageHealth StoreWriter::Health() const {
  StorageHealth health;
  health.problem = read_only_ ? StorageProblem::kReadOnly : problem_.load();
  health.reserve_held = !read_only_ && reserve_held_.load();
  if (health.problem == StorageProblem::kReadOnly) {
    health.message = ReadOnlyError().message + "; stored entries are served, compiles are not stored";
  } else if (health.problem == StorageProblem::kFull) {
    health.message = "the disk holding the cache database " + file_ +
                     " is full: compiles are not stored until there is room";
  } else if (!health.reserve_held) {
    health.message = "no room on the disk holding the cache database " + file_ + " for its " +
                     std::to_string(reserve_bytes_) + "-byte delete reserve (" + reserve_->path() +
                     "): the disk is (nearly) full";
  }
  return health;
}

}  // namespace kiln::cache
