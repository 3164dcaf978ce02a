// POST /v1/compile: the request read into a compile call, the compile
// service's answer written as JSON or as the executable's bytes.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "server/api/compile_request.h"
#include "server/api/kiln_api.h"
#include "server/http/json_response.h"
#include "server/service/entry_json.h"

namespace kiln::api {
namespace {

// Bodies hashed on the loop thread by the fast path are at most this big
// (XXH3 at several GB/s: tens of microseconds); larger ones go to a worker.
constexpr size_t kMaxFastPathBodyBytes = 256 << 10;

std::string Decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

http::Response CompileResponse(const service::CompileAnswer& answer, bool return_executable) {
  const service::EntryView& entry = answer.entry;
  const Error* not_stored = answer.not_stored ? &*answer.not_stored : nullptr;
  const std::string key = entry.id.key.Hex();
  const std::string_view outcome = service::CacheOutcomeName(answer.outcome);
  http::Response response;
  if (return_executable) {
    response = http::Response::WithBytes(200, entry.executable, "application/vnd.kiln.executable");
  } else {
    const service::CompileTimings& timings = answer.timings;
    nlohmann::json body = {
        {"key", key},
        {"cache", outcome},
        {"chip", entry.id.chip},
        {"plan", entry.plan},
        {"options", nlohmann::json::parse(entry.options_json, nullptr, false)},
        {"fast_path", answer.fast_path},
        {"compile_ms", answer.compile_ms},
        {"entry_compile_ms", entry.entry_compile_ms},
        {"kernels", entry.kernels},
        {"estimated_us", entry.estimated_us},
        {"executable_bytes", entry.executable ? entry.executable->size() : 0},
        {"created", service::Rfc3339(entry.created_ms)},
        {"stored", not_stored == nullptr},
        {"tier", answer.from_shared ? "shared" : "local"},
        {"timings",
         {{"parse_ms", timings.parse_ms},
          {"fingerprint_ms", timings.fingerprint_ms},
          {"lookup_ms", timings.lookup_ms},
          {"compile_ms", timings.compile_ms},
          {"store_ms", timings.store_ms},
          {"total_ms", MsSince(timings.start)}}},
    };
    if (not_stored != nullptr) {
      body["not_stored"] = {{"code", not_stored->ReasonOrCodeName()}, {"message", http::ErrorMessage(*not_stored)}};
    }
    response = http::JsonResponse(200, body);
  }
  response.headers.Set("X-Kiln-Key", key);
  response.headers.Set("X-Kiln-Stored", not_stored == nullptr ? "true" : "false");
  if (not_stored != nullptr) response.headers.Set("X-Kiln-Store-Error", std::string(not_stored->ReasonOrCodeName()));
  response.headers.Set("X-Kiln-Cache", std::string(outcome));
  response.headers.Set("X-Kiln-Tier", answer.from_shared ? "shared" : "local");
  response.headers.Set("X-Kiln-Compile-Ms", Decimal(answer.compile_ms));
  response.headers.Set("X-Kiln-Kernels", std::to_string(entry.kernels));
  response.headers.Set("X-Kiln-Estimated-Us", Decimal(entry.estimated_us));
  response.headers.Set("ETag", "\"" + key + "\"");
  return response;
}

}  // namespace

std::optional<http::Response> KilnApi::FastCompile(const http::Request& request, const std::string& tenant) {
  // Parsing JSON or hashing a big body is CPU work for a worker.
  if (request.body.size() > kMaxFastPathBodyBytes || HasJsonBody(request)) return std::nullopt;
  const service::CompileTimings timings;
  Result<CompileRequest> parsed = ParseCompileRequestKey(request, tenant);
  if (!parsed) return std::nullopt;  // the handler explains the 400
  std::optional<service::CompileAnswer> answer =
      engine_->compile().AnswerFromMemory(tenant, parsed->request_hash, parsed->options.chip, timings);
  if (!answer) return std::nullopt;
  return CompileResponse(*answer, parsed->return_executable);
}

void KilnApi::Compile(Call call) {
  service::CompileTimings timings;
  Result<CompileRequest> parsed = ParseCompileRequest(call.request, call.tenant);
  if (!parsed) {
    engine_->compile().Refused();
    return call.respond(http::ErrorResponse(parsed.error()));
  }
  CompileRequest& request = *parsed;
  service::CompileCall compile{.tenant = call.tenant,
                               .hlo = std::move(request.hlo),
                               .argument_shapes = std::move(request.argument_shapes),
                               .options = request.options,
                               .request_hash = request.request_hash,
                               .client = std::move(request.client),
                               .timings = timings};
  if (call.request.cancel) compile.gone = [cancel = call.request.cancel] { return cancel->cancelled(); };
  engine_->compile().Compile(std::move(compile), [respond = std::move(call.respond),
                                                   return_executable = request.return_executable](
                                                      Result<service::CompileAnswer> answer) mutable {
    if (!answer) return respond(http::ErrorResponse(answer.error()));
    respond(CompileResponse(*answer, return_executable));
  });
}

}  // namespace kiln::api
