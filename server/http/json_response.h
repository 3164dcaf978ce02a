// JSON responses, including the API's error shape
// {"error": {"code": "...", "message": "...", ...details}}.
//
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "base/status.h"
#include "server/http/response.h"

namespace kiln::http {

// `value` serialized with Content-Type application/json.
Response JsonResponse(int status, const nlohmann::json& value);

// The answer for `error` (never compressed): the status of its codes
// (error_status.h); "code" is its reason (or its code's name), "message"
// ErrorMessage(error); an error placed at a line of the request's HLO text
// adds "line" and "column", an input mismatch "parameter", "expected" and
// "got"; Retry-After and WWW-Authenticate come from its details.
Response ErrorResponse(const Error& error);

// The API's message for `error`: Error::ToString(), except that an error
// placed at a line starts with "LINE:COLUMN: " (or "LINE: "), the position
// in the request's text, with no file name.
std::string ErrorMessage(const Error& error);

}  // namespace kiln::http
