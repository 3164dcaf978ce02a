// GET /v1/recompiles: the caller's module names compiled as several
// programs, and what changed between them (server/recompile_report.h).
#include <charconv>

#include "server/http/json_response.h"
#include "server/kiln_service.h"
#include "server/recompile_report.h"
#include "server/service_errors.h"

namespace kiln::server {

void KilnService::Recompiles(Call call) {
  const http::Request& request = call.request;
  cache::CompileRecordFilter filter{.tenant = call.tenant, .min_keys = 2};
  if (auto name = request.Query("name")) filter.module_name = std::string(*name);
  if (auto value = request.Query("min_keys")) {
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), filter.min_keys);
    if (ec != std::errc() || end != value->data() + value->size() || filter.min_keys < 2 || filter.min_keys > 100000) {
      return call.respond(http::ErrorResponse(
          InvalidArgumentError("query parameter min_keys: expected an integer of at least 2, got '" +
                               std::string(*value) + "'")
              .WithReason("bad_request")));
    }
  }
  Result<std::vector<cache::CompileRecord>> records = store_->compile_log().Records(filter);
  if (!records) return call.respond(http::ErrorResponse(InternalFailure("reading the compile log", records.error())));
  auto read_source = [this](const cache::EntryId& id) -> std::optional<std::string> {
    Result<std::optional<std::string>> source = store_->Source(id);
    return source ? *source : std::nullopt;
  };
  call.respond(http::JsonResponse(200, RecompileReport(*records, read_source)));
}

}  // namespace kiln::server
