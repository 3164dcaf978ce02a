// Why the cache store cannot write, so that callers can answer a full disk
// or a read-only file differently from other failures (a compile is
// answered uncached, a delete with 507 or 503) instead of as a bug.
//
// A write the store refuses for lack of room is resource_exhausted with
// reason kStorageFull; one it refuses because the file is read-only is
// unavailable with reason kStoreReadOnly; one that waited past the busy
// timeout for a write lock another process holds is unavailable with reason
// kStoreBusy and a Retry-After. StorageProblemOf reads the problem back from
// such an error. Pure; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"

namespace kiln::cache {

enum class StorageProblem {
  kNone,      // any other failure
  kFull,      // SQLITE_FULL: the file system (or the file's size limit) is full
  kReadOnly,  // SQLITE_READONLY: a read-only URI, file or file system
  kBusy,      // SQLITE_BUSY/LOCKED past the busy timeout: another process holds the write lock
};

inline constexpr std::string_view kStorageFull = "insufficient_storage";
inline constexpr std::string_view kStoreReadOnly = "read_only_store";
inline constexpr std::string_view kStoreBusy = "store_busy";
// Not a storage problem: an entry a running request holds (pinned) cannot be
// deleted until it ends (failed_precondition with this reason, Retry-After).
inline constexpr std::string_view kEntryInUse = "entry_in_use";
// Nor these: a tuned executable is swapped in only over the bytes the tuner
// started from (aborted, entry_changed) and never over a tuned one at least
// as fast (failed_precondition, already_tuned); see CacheStore::ReplaceWithTuned.
inline constexpr std::string_view kEntryChanged = "entry_changed";
inline constexpr std::string_view kAlreadyTuned = "already_tuned";

// "none", "full", "read-only", "busy".
inline std::string_view StorageProblemName(StorageProblem problem) {
  switch (problem) {
    case StorageProblem::kFull:
      return "full";
    case StorageProblem::kReadOnly:
      return "read-only";
    case StorageProblem::kBusy:
      return "busy";
    case StorageProblem::kNone:
      break;
  }
  return "none";
}

// The problem a store write failed with (kNone for any other error).
inline StorageProblem StorageProblemOf(const Error& error) {
  if (error.code == ErrorCode::kResourceExhausted && error.reason() == kStorageFull) return StorageProblem::kFull;
  if (error.code == ErrorCode::kUnavailable && error.reason() == kStoreReadOnly) return StorageProblem::kReadOnly;
  if (error.code == ErrorCode::kUnavailable && error.reason() == kStoreBusy) return StorageProblem::kBusy;
  return StorageProblem::kNone;
}

}  // namespace kiln::cache
