// The API's answer to a cache store write that failed: 507
// insufficient_storage for a full disk, 503 read_only_store for a store
// opened read-only, 503 store_busy (Retry-After: 1) for a database another
// process kept locked past the busy timeout, 500 internal for anything else (a bug or a broken
// store). A compile that could not be stored is still answered (200, with
// "stored": false and this error's code and message); a delete is refused
// with it. Pure; thread-safe.
#pragma once

#include <string_view>

#include "cache/store_error.h"
#include "server/api_error.h"

namespace kiln::server {

ApiError StorageError(std::string_view what, const cache::StoreError& error);

}  // namespace kiln::server
