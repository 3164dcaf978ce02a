// POST /v1/explain: is this HLO cached, and if not, how does it differ
// from the nearest entry? Never compiles (server/service/miss_explainer.h).
#include <nlohmann/json.hpp>

#include "compiler/driver/module_topology.h"
#include "server/api/compile_request.h"
#include "server/api/kiln_api.h"
#include "server/http/json_response.h"
#include "server/service/miss_explainer.h"
#include "server/service/module_reader.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::api {

void KilnApi::Explain(Call call) {
  Result<CompileRequest> parsed = ParseCompileRequest(call.request, call.tenant);
  if (!parsed) return call.respond(http::ErrorResponse(parsed.error()));
  const CompileRequest& request = *parsed;
  Result<std::unique_ptr<hlo::Module>> module = service::ParseVerified(request.hlo, "<hlo>", request.argument_shapes);
  if (!module) return call.respond(http::ErrorResponse(module.error()));
  Result<nlohmann::json> answer = service::ExplainModule(engine_->store(), call.tenant, **module, request.options);
  if (!answer) {
    // The module's own faults (its topology, its fingerprint) are the
    // client's to see; a store that cannot be read is ours.
    const std::string& reason = answer.error().reason();
    const bool module_fault = reason == service::kFingerprintError || reason == driver::kTopologyMismatch;
    return call.respond(
        http::ErrorResponse(module_fault ? answer.error() : service::InternalFailure("explain", answer.error())));
  }
  call.respond(http::JsonResponse(200, *answer));
}

}  // namespace kiln::api
