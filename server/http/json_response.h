// JSON responses, including the API's error shape
// {"error": {"code": "...", "message": "..."}}.
//
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "server/http/response.h"

namespace kiln::http {

// `value` serialized with Content-Type application/json.
Response JsonResponse(int status, const nlohmann::json& value);

// The error body for `status`. `code` is a stable machine-readable name
// ("not_found", "payload_too_large"); `message` says what, where and why.
Response ErrorResponse(int status, std::string_view code, std::string_view message);

}  // namespace kiln::http

namespace kiln::http {

// A request the transport or a handler refuses, before it becomes a Response.
struct HttpError {
  int status = 400;
  std::string code;
  std::string message;
};

inline Response ErrorResponse(const HttpError& error) {
  return ErrorResponse(error.status, error.code, error.message);
}

}  // namespace kiln::http
