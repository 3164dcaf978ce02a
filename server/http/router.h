// Maps method + path pattern to handlers.
//
// Patterns are literal segments and `{name}` captures of one whole segment:
// "/v1/executables/{key}/execute". Matching is exact (no prefix or trailing
// slash folding). A path that matches a pattern under another method yields
// 405 with the Allow list; HEAD falls back to the GET route. A route may
// declare what it accepts (request_contract.h); the transport then refuses
// other query parameters and body types before the route runs. The Router is
// built before the server starts and is read-only (thread-safe) afterwards.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/http/handler.h"
#include "server/http/request.h"
#include "server/http/request_contract.h"

namespace kiln::http {

struct Route {
  std::string method;
  std::string pattern;
  std::vector<std::string> segments;  // pattern split on '/'; "{x}" captures
  Handler handler;
  Execution execution = Execution::kWorkerPool;
  FastPath fast_path;  // may be empty
  std::optional<RequestContract> contract;  // none: queries and bodies unchecked
};

struct RouteMatch {
  enum class Kind { kFound, kNotFound, kMethodNotAllowed, kBadPath };
  Kind kind = Kind::kNotFound;
  const Route* route = nullptr;  // kFound: owned by the Router
  Params path_params;            // kFound: decoded captures
  std::string allow;             // kMethodNotAllowed: "GET, HEAD"
  std::string error;             // kBadPath: why a capture failed to decode
};

class Router {
 public:
  // Fails on a pattern that does not start with '/', has an empty or
  // half-braced segment, or repeats an existing method + pattern.
  Status Add(std::string method, std::string pattern, Handler handler,
             Execution execution = Execution::kWorkerPool);
  // A worker-pool route with an inline fast path tried first (handler.h).
  Status Add(std::string method, std::string pattern, FastPath fast_path, Handler handler);

  // Declares what the route `method` `pattern` accepts; fails when no such
  // route was added.
  Status Declare(std::string_view method, std::string_view pattern, RequestContract contract);

  RouteMatch Match(std::string_view method, std::string_view path) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

}  // namespace kiln::http
