#include "server/http/json_response.h"

#include <nlohmann/json.hpp>

namespace kiln::http {

Response JsonResponse(int status, const nlohmann::json& value) {
  // `replace` keeps invalid UTF-8 from a message (e.g. an echoed path) from
  // failing serialization.
  return Response::Text(status,
                        value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                        "application/json");
}

Response ErrorResponse(int status, std::string_view code, std::string_view message) {
  nlohmann::json body = {{"error", {{"code", code}, {"message", message}}}};
  Response response = JsonResponse(status, body);
  response.compressible = false;
  return response;
}

}  // namespace kiln::http
