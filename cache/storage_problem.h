// Why the cache store cannot write, so that callers can answer a full disk
// or a read-only file differently from other failures (a compile is
// answered uncached, a delete with 507 or 503) instead of as a bug.
//
// A write the store refuses for lack of room is resource_exhausted with
// reason kStorageFull; one it refuses because the file is read-only is
// unavailable with reason kStoreReadOnly. StorageProblemOf reads the
// problem back from such an error. Pure; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"

namespace kiln::cache {

enum class StorageProblem {
  kNone,      // any other failure
  kFull,      // SQLITE_FULL: the file system (or the file's size limit) is full
  kReadOnly,  // SQLITE_READONLY: a read-only URI, file or file system
};

inline constexpr std::string_view kStorageFull = "insufficient_storage";
inline constexpr std::string_view kStoreReadOnly = "read_only_store";

// "none", "full", "read-only".
inline std::string_view StorageProblemName(StorageProblem problem) {
  switch (problem) {
    case StorageProblem::kFull:
      return "full";
    case StorageProblem::kReadOnly:
      return "read-only";
    case StorageProblem::kNone:
      break;
  }
  return "none";
}

// The problem a store write failed with (kNone for any other error).
inline StorageProblem StorageProblemOf(const Error& error) {
  if (error.code == ErrorCode::kResourceExhausted && error.reason == kStorageFull) return StorageProblem::kFull;
  if (error.code == ErrorCode::kUnavailable && error.reason == kStoreReadOnly) return StorageProblem::kReadOnly;
  return StorageProblem::kNone;
}

}  // namespace kiln::cache
