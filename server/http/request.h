// One parsed HTTP request as handlers see it.
//
// The transport fills every field before a handler runs: `body` is already
// de-chunked and decoded (Content-Encoding: zstd), `path_params` holds the
// values the route pattern captured. Plain data: movable, thread-compatible;
// a handler owns the Request it is given and may move it to another thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/cancel_signal.h"
#include "server/http/header_map.h"

namespace kiln::http {

using Params = std::vector<std::pair<std::string, std::string>>;

// The first value named `name` in `params`, or nullopt.
std::optional<std::string_view> FindParam(const Params& params, std::string_view name);

struct Request {
  std::string method;  // "GET", "POST", ... as on the wire
  std::string target;  // the raw request-target, "/v1/entries?limit=5"
  std::string path;    // the target's path, still percent-encoded
  Params query;        // decoded query parameters in order
  HeaderMap headers;
  std::string body;    // de-chunked and content-decoded
  Params path_params;  // decoded captures of the route pattern, e.g. {key}
  std::string route;   // the matched route pattern, e.g. "/v1/executables/{key}"
  std::string peer;    // "127.0.0.1:54321"
  bool keep_alive = true;
  // Set when the client goes away before the answer is written (see
  // cancel_signal.h); null for inline handlers and hand-made requests.
  std::shared_ptr<const CancelSignal> cancel;

  bool cancelled() const { return cancel != nullptr && cancel->cancelled(); }

  std::optional<std::string_view> Query(std::string_view name) const {
    return FindParam(query, name);
  }
  std::optional<std::string_view> PathParam(std::string_view name) const {
    return FindParam(path_params, name);
  }
};

}  // namespace kiln::http
