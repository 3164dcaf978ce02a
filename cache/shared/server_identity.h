// Who this process is in the fleet's records: the host's name, "host:pid",
// and lease tokens that are unique and say which server holds them.
// Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kiln::cache::shared {

std::string HostName();  // "?" when the host has none
std::string ProcessName();  // "host:pid"
// "host:pid:TAG<20 random hex digits>": a new token for every call.
std::string NewLeaseToken(std::string_view tag = "");

}  // namespace kiln::cache::shared
