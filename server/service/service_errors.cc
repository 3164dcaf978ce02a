#include "server/service/service_errors.h"

#include <string>

#include "cache/storage_problem.h"

namespace kiln::service {

Error InternalFailure(std::string_view what, const Error& error) {
  return InternalError(std::string(what) + ": " + error.ToString());
}

Error StorageFailure(std::string_view what, const Error& error) {
  const bool in_use = error.code == ErrorCode::kFailedPrecondition && error.reason() == cache::kEntryInUse;
  if (!in_use && cache::StorageProblemOf(error) == cache::StorageProblem::kNone) return InternalFailure(what, error);
  return Error(error).WithContext(what);
}

}  // namespace kiln::service
