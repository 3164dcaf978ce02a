// The dashboard page kiln serve answers at GET / (server/api/dashboard/
// index.html, embedded at build time so the binary needs no files and no
// network). Static: it holds no data; it reads the API with the visitor's
// token. Thread-safe.
#pragma once

#include <string_view>

namespace kiln::api {

std::string_view DashboardPage();

}  // namespace kiln::api
