#include "tools/prewarm_server_target.h"

#include <nlohmann/json.hpp>

#include "base/str_cat.h"
#include "compiler/stablehlo/frontend.h"

namespace kiln::tools {
namespace {

// The error of a non-2xx answer: the API's {"error": {"code", "message"}}
// when there is one.
Error AnswerError(const HttpResponse& response, std::string_view what) {
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  std::string message = StrCat("HTTP ", response.status);
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    const nlohmann::json& error = body["error"];
    if (error.contains("code") && error["code"].is_string()) message += " " + error["code"].get<std::string>();
    if (error.contains("message") && error["message"].is_string()) message += ": " + error["message"].get<std::string>();
  }
  const ErrorCode code = response.status == 401 || response.status == 403 ? ErrorCode::kPermissionDenied
                         : response.status >= 500                        ? ErrorCode::kUnavailable
                                                                         : ErrorCode::kInvalidArgument;
  return Error::Coded(code, StrCat(what, ": ", message));
}

}  // namespace

std::vector<std::string> ServerTarget::Headers() const {
  if (token_.empty()) return {};
  return {"Authorization: Bearer " + token_};
}

Status ServerTarget::Check() {
  KILN_ASSIGN_OR_RETURN(HttpResponse response, HttpRoundTrip(url_, "GET", "/healthz", Headers(), {}, timeout_));
  if (response.status != 200) return AnswerError(response, "GET /healthz");
  return Ok();
}

Result<bool> ServerTarget::Contains(const CompileJob& job) {
  KILN_ASSIGN_OR_RETURN(HttpResponse response,
                        HttpRoundTrip(url_, "HEAD", "/v1/executables/" + job.key.Hex(), Headers(), {}, timeout_));
  if (response.status == 200) return true;
  if (response.status == 404) return false;
  return AnswerError(response, "HEAD /v1/executables/" + job.key.Hex());
}

Result<JobOutcome> ServerTarget::Make(const CompileJob& job) {
  std::string target = StrCat("/v1/compile?chip=", job.options.chip, "&plan=", fusion::PlanKindName(job.options.plan));
  if (!job.options.topology.empty()) target += "&topology=" + job.options.topology;
  std::vector<std::string> headers = Headers();
  // MLIR bytecode is binary; both text forms go as text. The server tells the
  // three apart by content either way.
  const bool bytecode = stablehlo::DetectModuleFormat(job.source->text) == stablehlo::ModuleFormat::kMlirBytecode;
  headers.push_back(bytecode ? "Content-Type: application/octet-stream" : "Content-Type: text/plain");
  KILN_ASSIGN_OR_RETURN(HttpResponse response, HttpRoundTrip(url_, "POST", target, headers, job.source->text, timeout_));
  if (response.status != 200) return AnswerError(response, "POST /v1/compile");
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("key") || !body.contains("cache")) {
    return DataLossError("POST /v1/compile: the answer is not a CompileResult");
  }
  if (body["key"] != job.key.Hex()) {
    return InternalError(StrCat("the server keyed the module ", body["key"].dump(), ", kiln computed ", job.key.Hex(),
                                " (another compiler version?)"));
  }
  if (body.contains("stored") && body["stored"] == false) {
    std::string why = body.contains("not_stored") ? body["not_stored"].dump() : "no reason given";
    return UnavailableError("the server compiled it but did not store it: " + why);
  }
  JobOutcome outcome;
  outcome.compiled = body["cache"] != "hit";
  if (outcome.compiled && body.contains("compile_ms") && body["compile_ms"].is_number()) {
    outcome.compile_seconds = body["compile_ms"].get<double>() / 1000;
  }
  if (body.contains("executable_bytes") && body["executable_bytes"].is_number_unsigned()) {
    outcome.bytes = body["executable_bytes"].get<uint64_t>();
  }
  return outcome;
}

}  // namespace kiln::tools
