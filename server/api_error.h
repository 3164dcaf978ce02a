// The API's error answers: {"error": {"code", "message", ...details}}.
//
// An ApiError is what a route refuses a request with before it becomes a
// Response: the HTTP status, the stable code of schema/openapi.yaml, a
// message saying what, where and why, and optional details (HLO `line` and
// `column`; `parameter`, `expected` and `got` of an input mismatch). Plain
// value; copyable; thread-compatible. The functions are pure.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/hlo/status.h"
#include "server/http/response.h"

namespace kiln::server {

struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
  std::optional<int> line = std::nullopt;
  std::optional<int> column = std::nullopt;
  std::optional<std::string> parameter = std::nullopt;
  std::optional<std::string> expected = std::nullopt;
  std::optional<std::string> got = std::nullopt;
  int retry_after_seconds = 0;  // > 0: a Retry-After header (503)
  std::string www_authenticate = {};  // non-empty: a WWW-Authenticate header (401)
};

template <typename T>
using ApiResult = std::expected<T, ApiError>;

inline std::unexpected<ApiError> Refuse(int status, std::string code, std::string message) {
  return std::unexpected(ApiError{.status = status, .code = std::move(code), .message = std::move(message)});
}

// The JSON error response for `error` (never compressed).
http::Response ErrorToResponse(const ApiError& error);

// An HLO parse error ("<file>:3:13: expected ...") or verifier error ("...
// (line 6): ...") as 400 hlo_parse_error / hlo_verify_error whose message
// starts with "LINE:COLUMN: " (or "LINE: ") and which carries line/column.
ApiError HloParseError(std::string_view message);
ApiError HloVerifyError(std::string_view message);

// 500 internal, for errors that mean a bug or a broken store.
ApiError InternalError(std::string_view what, const Error& error);

}  // namespace kiln::server
