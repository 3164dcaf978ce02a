// Tenants: the namespaces entries, records and jobs live in.
//
// Every request reads and writes exactly one namespace (server/api/auth.h
// says which); the engine never falls through from one to another. Without
// authentication every request uses kDefaultTenant, and so do the commands
// that write a store directly (`kiln prewarm --db`, `kiln tune --db`), so a
// server on that store answers what they stored. kSharedTenant is the
// namespace a token opts into with X-Kiln-Namespace: shared. No token may
// be given either name as its own tenant.
#pragma once

#include <string_view>

namespace kiln::service {

inline constexpr std::string_view kDefaultTenant = "default";
inline constexpr std::string_view kSharedTenant = "shared";

}  // namespace kiln::service
