// The API's answers for failures it does not expect a request to cause.
//
// InternalFailure: 500 internal, whatever the failure's own code (a bug or
// a broken store): "what: <the failure>". StorageFailure: a cache store
// write that failed: 507 insufficient_storage for a full disk, 503
// read_only_store for a store opened read-only, 503 store_busy for a
// database another process keeps locked, 409 entry_in_use for an entry a
// running request holds (codes and reasons from the store,
// cache/storage_problem.h), else InternalFailure. A compile that
// could not be stored is still answered (200, with "stored": false and this
// error's code and message); a delete is refused with it. Pure;
// thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"

namespace kiln::service {

Error InternalFailure(std::string_view what, const Error& error);
Error StorageFailure(std::string_view what, const Error& error);

}  // namespace kiln::service
