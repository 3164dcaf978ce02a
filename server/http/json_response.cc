#include "server/http/json_response.h"

#include <nlohmann/json.hpp>

#include "server/http/error_status.h"

namespace kiln::http {

Response JsonResponse(int status, const nlohmann::json& value) {
  // `replace` keeps invalid UTF-8 from a message (e.g. an echoed path) from
  // failing serialization.
  return Response::Text(status,
                        value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                        "application/json");
}

std::string ErrorMessage(const Error& error) {
  const SourceLocation& where = error.where();
  if (where.line <= 0) return error.ToString();
  std::string text = std::to_string(where.line);
  if (where.column > 0) text += ":" + std::to_string(where.column);
  text += ": ";
  if (!error.context().empty()) text += error.context() + ": ";
  if (!where.subject.empty()) text += where.subject + ": ";
  return text + error.message;
}

Response ErrorResponse(const Error& error) {
  nlohmann::json detail = {{"code", error.ReasonOrCodeName()}, {"message", ErrorMessage(error)}};
  if (error.where().line > 0) detail["line"] = error.where().line;
  if (error.where().line > 0 && error.where().column > 0) detail["column"] = error.where().column;
  const ErrorDetails& details = error.details();
  if (details.parameter) detail["parameter"] = *details.parameter;
  if (details.expected) detail["expected"] = *details.expected;
  if (details.got) detail["got"] = *details.got;
  Response response = JsonResponse(HttpStatusOf(error), {{"error", std::move(detail)}});
  response.compressible = false;
  if (details.retry_after_seconds > 0) response.headers.Set("Retry-After", std::to_string(details.retry_after_seconds));
  if (!details.challenge.empty()) response.headers.Set("WWW-Authenticate", details.challenge);
  return response;
}

}  // namespace kiln::http
