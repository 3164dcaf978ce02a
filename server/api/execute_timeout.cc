#include "server/api/execute_timeout.h"

#include <algorithm>
#include <optional>

#include "base/units.h"
#include "server/api/api_reasons.h"

namespace kiln::api {

using std::chrono::milliseconds;

Result<milliseconds> ExecuteTimeout(const http::Request& request, milliseconds server_max) {
  milliseconds timeout = server_max;
  auto lower = [&](std::optional<std::string_view> text, const std::string& where) -> Status {
    if (!text) return Ok();
    Result<milliseconds> asked = ParseDuration(*text);
    if (!asked) return InvalidArgumentError(where + ": " + asked.error().ToString()).WithReason(std::string(kBadRequest));
    timeout = std::min(timeout, *asked);
    return Ok();
  };
  KILN_RETURN_IF_ERROR(lower(request.Query("timeout"), "query parameter timeout"));
  KILN_RETURN_IF_ERROR(lower(request.headers.Get("X-Kiln-Timeout"), "header X-Kiln-Timeout"));
  return timeout;
}

}  // namespace kiln::api
