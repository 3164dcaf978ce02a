// Splitting a request-target into path and query, and percent-decoding.
//
// Pure functions; errors name the offending position.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "server/http/request.h"

namespace kiln::http {

struct ParsedTarget {
  std::string path;  // still percent-encoded; starts with '/'
  Params query;      // decoded, '+' read as space
};

// Accepts origin-form targets ("/a/b?x=1"); rejects anything else (absolute
// form, "*", malformed escapes) with an error meant for a 400 response.
Result<ParsedTarget> ParseTarget(std::string_view target);

// Decodes %XX escapes; with `plus_as_space`, '+' becomes ' ' (query strings).
Result<std::string> PercentDecode(std::string_view text, bool plus_as_space);

}  // namespace kiln::http
