// What a route accepts besides its path: the query parameters it reads and
// the media types its body may have.
//
// The transport checks a request against its route's contract after routing
// and before the route's fast path or handler runs, so a misspelt option or
// a body of the wrong kind never silently does something else:
//  * a query parameter the route does not read, or one given twice, is
//    400 `invalid_query`, naming it (and the closest accepted name);
//  * a body whose Content-Type is not listed is 415
//    `unsupported_media_type`, listing the accepted types. Parameters of
//    the media type ("; charset=utf-8") are ignored; case is not significant.
// Pure data and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/json_response.h"
#include "server/http/request.h"

namespace kiln::http {

struct RequestContract {
  // Query parameter names the route reads.
  std::vector<std::string> query;
  // Media types a request body may have, lowercase, without parameters.
  // Empty: the route reads no body, and Content-Type is not checked.
  std::vector<std::string> body_types;
  // Whether a non-empty body without Content-Type is accepted (the route
  // reads it as its first body type).
  bool untyped_body = false;
};

// The route a contract belongs to, as messages name it: "POST /v1/compile".
struct RouteName {
  std::string_view method;
  std::string_view pattern;
};

// The refusal of `request` under `contract`, or nullopt.
std::optional<Error> CheckRequestContract(const RequestContract& contract, const Request& request, RouteName route);

// The media type of a Content-Type value: before any ';', trimmed, lowercase.
std::string MediaTypeOf(std::string_view content_type);

}  // namespace kiln::http
