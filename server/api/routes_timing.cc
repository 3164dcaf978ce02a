// POST /v1/executables/{key}/time and GET /v1/executables/{key}/trace: the
// simulated device time of a cached executable without computing values
// (runtime/timing SimulateProgram, what `kiln run --timing-only` prints),
// as the per-kernel profile or as a Chrome/Perfetto trace. Analytic: no
// pool chip is taken, so timing never waits behind runs.
#include <nlohmann/json.hpp>

#include "runtime/timing/profile_output.h"
#include "runtime/timing/timing_simulator.h"
#include "server/api/kiln_api.h"
#include "server/http/json_response.h"
#include "server/service/reasons.h"

namespace kiln::api {

Result<runtime::timing::DeviceProfile> KilnApi::SimulateEntry(const Call& call, std::string* key) {
  KILN_ASSIGN_OR_RETURN(cache::EntryId id,
                        engine_->entries().Find(call.tenant, call.request.PathParam("key").value_or("")));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const service::ReadyProgram> ready, engine_->execute().Program(id));
  *key = id.key.Hex();
  auto profile = runtime::timing::SimulateProgram(*ready->program, *ready->chip, ready->timer->options());
  // A loop whose trip count depends on data cannot be timed without values.
  if (!profile) return std::move(profile.error()).WithReason(std::string(service::kTimingUnavailable));
  return profile;
}

void KilnApi::TimeExecutable(Call call) {
  std::string key;
  Result<runtime::timing::DeviceProfile> profile = SimulateEntry(call, &key);
  if (!profile) return call.respond(http::ErrorResponse(profile.error()));
  nlohmann::json body = runtime::timing::ProfileToJson(*profile);
  body["key"] = key;
  call.respond(http::JsonResponse(200, body));
}

void KilnApi::TraceExecutable(Call call) {
  std::string key;
  Result<runtime::timing::DeviceProfile> profile = SimulateEntry(call, &key);
  if (!profile) return call.respond(http::ErrorResponse(profile.error()));
  call.respond(http::JsonResponse(200, runtime::timing::ChromeTraceJson(*profile)));
}

}  // namespace kiln::api
