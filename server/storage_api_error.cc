#include "server/storage_api_error.h"

namespace kiln::server {

ApiError StorageError(std::string_view what, const cache::StoreError& error) {
  switch (error.problem) {
    case cache::StorageProblem::kFull:
      return ApiError{.status = 507, .code = "insufficient_storage", .message = std::string(what) + ": " + error.message};
    case cache::StorageProblem::kReadOnly:
      return ApiError{.status = 503, .code = "read_only_store", .message = std::string(what) + ": " + error.message};
    case cache::StorageProblem::kBusy:
      return ApiError{.status = 503, .code = "store_busy", .message = std::string(what) + ": " + error.message,
                      .retry_after_seconds = 1};
    case cache::StorageProblem::kNone:
      break;
  }
  return InternalError(what, error);
}

}  // namespace kiln::server
