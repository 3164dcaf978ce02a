// GET /v1/recompiles: the caller's module names compiled as several
// programs, and what changed between them (server/service/recompile_report.h).
#include <charconv>

#include "server/api/api_reasons.h"
#include "server/api/kiln_api.h"
#include "server/http/json_response.h"
#include "server/service/recompile_report.h"
#include "server/service/service_errors.h"

namespace kiln::api {

void KilnApi::Recompiles(Call call) {
  const http::Request& request = call.request;
  cache::CompileRecordFilter filter{.tenant = call.tenant, .min_keys = 2};
  if (auto name = request.Query("name")) filter.module_name = std::string(*name);
  if (auto value = request.Query("min_keys")) {
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), filter.min_keys);
    if (ec != std::errc() || end != value->data() + value->size() || filter.min_keys < 2 || filter.min_keys > 100000) {
      return call.respond(http::ErrorResponse(
          InvalidArgumentError("query parameter min_keys: expected an integer of at least 2, got '" +
                               std::string(*value) + "'")
              .WithReason(std::string(kBadRequest))));
    }
  }
  Result<std::vector<cache::CompileRecord>> records = engine_->store().compile_log().Records(filter);
  if (!records) return call.respond(http::ErrorResponse(service::InternalFailure("reading the compile log", records.error())));
  auto read_source = [this](const cache::EntryId& id) -> std::optional<std::string> {
    Result<std::optional<std::string>> source = engine_->store().Source(id);
    return source ? *source : std::nullopt;
  };
  call.respond(http::JsonResponse(200, service::RecompileReport(*records, read_source)));
}

}  // namespace kiln::api
