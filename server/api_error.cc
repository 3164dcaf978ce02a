#include "server/api_error.h"

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

#include "server/http/json_response.h"

namespace kiln::server {
namespace {

// Parses the decimal number at the front of `text`, advancing past it.
std::optional<int> TakeNumber(std::string_view& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || value < 1) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return value;
}

}  // namespace

http::Response ErrorToResponse(const ApiError& error) {
  nlohmann::json detail = {{"code", error.code}, {"message", error.message}};
  if (error.line) detail["line"] = *error.line;
  if (error.column) detail["column"] = *error.column;
  if (error.parameter) detail["parameter"] = *error.parameter;
  if (error.expected) detail["expected"] = *error.expected;
  if (error.got) detail["got"] = *error.got;
  http::Response response = http::JsonResponse(error.status, {{"error", std::move(detail)}});
  response.compressible = false;
  if (error.retry_after_seconds > 0) {
    response.headers.Set("Retry-After", std::to_string(error.retry_after_seconds));
  }
  if (!error.www_authenticate.empty()) response.headers.Set("WWW-Authenticate", error.www_authenticate);
  return response;
}

ApiError HloParseError(std::string_view message) {
  ApiError error{.status = 400, .code = "hlo_parse_error", .message = std::string(message)};
  // The parser writes "<filename>:LINE:COL: what"; the filename is ours.
  std::string_view rest = message;
  if (size_t colon = rest.find(':'); colon != std::string_view::npos && colon > 0 &&
                                     (rest[0] == '<' || !std::isdigit(static_cast<unsigned char>(rest[0])))) {
    rest.remove_prefix(colon + 1);
  }
  std::string_view position = rest;
  std::optional<int> line = TakeNumber(position);
  if (!line || !position.starts_with(':')) return error;
  position.remove_prefix(1);
  std::optional<int> column = TakeNumber(position);
  if (!column || !position.starts_with(':')) return error;
  error.line = line;
  error.column = column;
  error.message = std::string(rest);
  return error;
}

ApiError HloVerifyError(std::string_view message) {
  ApiError error{.status = 400, .code = "hlo_verify_error", .message = std::string(message)};
  // The verifier names the source line as "... (line N): ...".
  constexpr std::string_view kMarker = " (line ";
  size_t at = message.find(kMarker);
  if (at == std::string_view::npos) return error;
  std::string_view number = message.substr(at + kMarker.size());
  std::optional<int> line = TakeNumber(number);
  if (!line || !number.starts_with(')')) return error;
  number.remove_prefix(1);
  error.line = line;
  error.message = std::to_string(*line) + ": " + std::string(message.substr(0, at)) + std::string(number);
  return error;
}

ApiError InternalError(std::string_view what, const Error& error) {
  return ApiError{.status = 500, .code = "internal", .message = std::string(what) + ": " + error.message};
}

}  // namespace kiln::server
