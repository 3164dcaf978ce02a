// POST /v1/explain: is this HLO cached, and if not, how does it differ
// from the nearest entry? Never compiles (server/miss_explainer.h).
#include <nlohmann/json.hpp>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "server/compile_request.h"
#include "server/http/json_response.h"
#include "server/kiln_service.h"
#include "server/miss_explainer.h"
#include "server/service_errors.h"

namespace kiln::server {

void KilnService::Explain(Call call) {
  Result<CompileRequest> parsed = ParseCompileRequest(call.request, call.tenant);
  if (!parsed) return call.respond(http::ErrorResponse(parsed.error()));
  const CompileRequest& request = *parsed;
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(request.hlo, "<hlo>");
  if (!module) return call.respond(http::ErrorResponse(module.error().WithReason("hlo_parse_error")));
  if (Status verified = hlo::VerifyModule(**module); !verified) {
    return call.respond(http::ErrorResponse(verified.error().WithReason("hlo_verify_error")));
  }
  Result<nlohmann::json> answer = ExplainModule(*store_, call.tenant, **module, request.options);
  if (!answer && answer.error().reason() == "hlo_verify_error") return call.respond(http::ErrorResponse(answer.error()));
  if (!answer) return call.respond(http::ErrorResponse(InternalFailure("explain", answer.error())));
  call.respond(http::JsonResponse(200, *answer));
}

}  // namespace kiln::server
