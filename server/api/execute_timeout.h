// The deadline of one execute: the server's --execute-timeout, which the
// request may lower with `?timeout=` or an X-Kiln-Timeout header (never
// raise). It counts from the moment the handler takes the request, so time
// spent queued for a chip counts. Pure; thread-safe.
#pragma once

#include <chrono>

#include "base/status.h"
#include "server/http/request.h"

namespace kiln::api {

// `server_max`, or less when the request asks (query parameter `timeout`,
// header X-Kiln-Timeout; both: the smaller). A value above `server_max` is
// lowered to it. 400 bad_request for a malformed or zero value.
Result<std::chrono::milliseconds> ExecuteTimeout(const http::Request& request, std::chrono::milliseconds server_max);

}  // namespace kiln::api
