// Why a write to the cache store failed, so that callers can answer a full
// disk, a read-only file or a database another process keeps locked
// differently from other failures (a compile is answered uncached, a delete
// with 507 or 503) instead of as a bug.
//
// A StoreError converts from and to kiln::Error, so KILN_RETURN_IF_ERROR
// and KILN_ASSIGN_OR_RETURN pass it through either way (the problem is
// kNone for an Error from elsewhere, and lost when it becomes an Error).
// Plain value; copyable; thread-compatible.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>

#include "compiler/hlo/status.h"

namespace kiln::cache {

enum class StorageProblem {
  kNone,      // any other failure
  kFull,      // SQLITE_FULL: the file system (or the file's size limit) is full
  kReadOnly,  // SQLITE_READONLY: a read-only URI, file or file system
  kBusy,      // SQLITE_BUSY/LOCKED past the busy timeout: another process holds the write lock
};

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

struct StoreError {
  std::string message;
  StorageProblem problem = StorageProblem::kNone;

  StoreError(Error error) : message(std::move(error.message)) {}  // NOLINT: implicit by design
  StoreError(std::string text, StorageProblem kind) : message(std::move(text)), problem(kind) {}
  operator Error() const { return Error{message}; }  // NOLINT: implicit by design
};

template <typename T>
using StoreResult = std::expected<T, StoreError>;

}  // namespace kiln::cache
