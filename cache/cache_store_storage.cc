// CacheStore: a full disk, a read-only file and a database another process
// keeps locked. Writes that fail for lack of room, permission or the write
// lock come back coded with the problem (storage_problem.h); the space reserve gives
// deletes room on a full disk.
#include <sqlite3.h>

#include "cache/cache_store.h"
#include "cache/migrations.h"

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

Status CacheStore::CheckStorage() {
  const char* file = sqlite3_db_filename(writer_->raw(), "main");
  db_file_ = file != nullptr && *file != '\0' ? file : options_.path;
  sqlite3_vfs* vfs = nullptr;
  if (sqlite3_file_control(writer_->raw(), "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || vfs == nullptr) {
    vfs = sqlite3_vfs_find(nullptr);
  }
  reserve_ = std::make_unique<SpaceReserve>(db_file_ + "-reserve", options_.reserve_bytes, vfs);
  read_only_ = writer_->read_only();
  if (read_only_) {
    KILN_ASSIGN_OR_RETURN(int version, SchemaVersion(*writer_));
    const int latest = LatestVersion(EmbeddedMigrations());
    if (version != latest) {
      return FailedPreconditionError("cache " + db_file_ + " is read-only and at schema version " +
                                     std::to_string(version) + ", but this kiln needs version " +
                                     std::to_string(latest) +
                                     ": open it writable once (e.g. kiln inspect stats --db FILE) to migrate it");
    }
    return Ok();
  }
  // On a disk already full the store still opens and serves what it holds
  // (Health says the reserve is missing); puts fail as kFull until there
  // is room.
  RefillReserveLocked();
  return Ok();
}

Error CacheStore::ReadOnlyError() const {
  return UnavailableError("the cache database " + db_file_ +
                          " is read-only (a mode=ro URI, or a file or file system kiln may not "
                          "write): nothing can be stored or deleted")
      .WithReason(std::string(kStoreReadOnly));
}

Error CacheStore::WriteFailureLocked(const Error& error) {
  const StorageProblem problem = ProblemOf(writer_->last_failure());
  if (problem == StorageProblem::kNone) return error;
  if (problem == StorageProblem::kBusy) {
    // Passing: the store's health is unchanged, the next write may succeed.
    return UnavailableError("the cache database " + db_file_ + " stayed locked by another connection for " +
                            std::to_string(options_.busy_timeout_ms) + " ms (" +
                            sqlite3_errstr(writer_->last_failure()) + "): retry later")
        .WithReason(std::string(kStoreBusy))
        .RetryAfter(1);
  }
  storage_problem_.store(problem);
  if (problem == StorageProblem::kReadOnly) return ReadOnlyError();
  return ResourceExhaustedError("the disk holding the cache database " + db_file_ + " is full (" +
                                sqlite3_errstr(writer_->last_failure()) +
                                "): free space there, or delete entries (DELETE /v1/executables/KEY, "
                                "kiln inspect evict)")
      .WithReason(std::string(kStorageFull));
}

void CacheStore::WriteSucceededLocked() {
  storage_problem_.store(StorageProblem::kNone);
  RefillReserveLocked();
}

void CacheStore::RefillReserveLocked() {
  // Room again: take back the reserve a delete on a full disk released
  // (only a stat while it is held).
  reserve_held_.store(reserve_->Refill());
}

StorageHealth CacheStore::Health() const {
  StorageHealth health;
  health.problem = read_only_ ? StorageProblem::kReadOnly : storage_problem_.load();
  health.reserve_held = !read_only_ && reserve_held_.load();
  if (health.problem == StorageProblem::kReadOnly) {
    health.message = ReadOnlyError().message + "; stored entries are served, compiles are not stored";
  } else if (health.problem == StorageProblem::kFull) {
    health.message = "the disk holding the cache database " + db_file_ +
                     " is full: compiles are not stored until there is room";
  } else if (!health.reserve_held) {
    health.message = "no room on the disk holding the cache database " + db_file_ + " for its " +
                     std::to_string(options_.reserve_bytes) + "-byte delete reserve (" + reserve_->path() +
                     "): the disk is (nearly) full";
  }
  return health;
}

}  // namespace kiln::cache
