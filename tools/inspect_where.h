// Where an entry lives beyond the local store, for `kiln inspect show
// --shared URL`: present in the shared tier (Redis) or not, its size and
// time to live, and whether a server holds its compile lease now.
// Read-only: never writes to Redis. Thread-compatible.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cache/entry.h"

namespace kiln::tools {

// {"url": redacted, "present": bool, "bytes", "expires_in_s" (null: never),
// "compiling": bool}; an error when the URL is bad or Redis does not answer.
Result<nlohmann::json> SharedPresence(const std::string& url_text, const cache::EntryId& id);

}  // namespace kiln::tools
