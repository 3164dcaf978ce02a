// POST /v1/executables/{key}/execute: inputs in, a run on a pool chip of
// the executable's kind, outputs and the device profile out.
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/io/safetensors.h"
#include "runtime/io/tensor_names.h"
#include "runtime/timing/profile_output.h"
#include "server/api/api_reasons.h"
#include "server/api/execute_inputs.h"
#include "server/api/execute_timeout.h"
#include "server/api/json_tensors.h"
#include "server/api/kiln_api.h"
#include "server/http/header_map.h"
#include "server/http/json_response.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::api {
namespace {

using nlohmann::json;

constexpr std::string_view kSafetensorsType = "application/vnd.safetensors";

enum class Form { kSafetensors, kJson };

std::string_view MediaType(const http::Request& request, std::string_view header) {
  std::string_view value = request.headers.Get(header).value_or("");
  value = value.substr(0, value.find(';'));
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return value;
}

Result<Form> RequestForm(const http::Request& request) {
  std::string_view type = MediaType(request, "Content-Type");
  if (EqualsIgnoreCase(type, kSafetensorsType) || EqualsIgnoreCase(type, "application/octet-stream")) {
    return Form::kSafetensors;
  }
  if (EqualsIgnoreCase(type, "application/json")) return Form::kJson;
  return InvalidArgumentError("Content-Type '" + std::string(type) +
                              "' is not accepted for execute; send application/vnd.safetensors or application/json")
      .WithReason(std::string(kUnsupportedMediaType));
}

Form AnswerForm(const http::Request& request, Form request_form) {
  std::string_view accept = request.headers.Get("Accept").value_or("");
  const bool json = accept.find("application/json") != std::string_view::npos;
  const bool safetensors = accept.find(kSafetensorsType) != std::string_view::npos;
  if (json && !safetensors) return Form::kJson;
  if (safetensors && !json) return Form::kSafetensors;
  return request_form;
}

std::string SixSignificantDigits(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

// X-Kiln-Profile: the kernel count and each bound's kernels and time, a
// line of bounded size whatever the program ("kernels=60; memory=41
// 310.2us; compute=12 810.5us; overhead=7 14.3us"). The whole profile goes
// in the body (JSON `kernels`, safetensors `kiln.kernels`): a 60-kernel
// list in a header passes the 4-8 KiB header buffers of reverse proxies
// (nginx answers 502 "upstream sent too big header").
std::string ProfileSummary(const json& kernels) {
  std::map<std::string, std::pair<int64_t, double>> by_bound;
  for (const json& kernel : kernels) {
    auto& [count, us] = by_bound[kernel.value("bound", "unknown")];
    ++count;
    us += kernel.value("us", 0.0);
  }
  std::string summary = "kernels=" + std::to_string(kernels.size());
  for (const auto& [bound, figures] : by_bound) {
    summary += "; " + bound + "=" + std::to_string(figures.first) + " " + SixSignificantDigits(figures.second) + "us";
  }
  return summary;
}

// The answer for a completed run, in `form`: outputs, device, topology,
// time and the per-kernel profile.
Result<http::Response> RunResponse(service::ExecuteResult& done, Form form) {
  runtime::timing::TimedExecution& run = done.run;
  const double device_us = run.profile ? run.profile->seconds * 1e6 : 0;
  json profile = run.profile ? runtime::timing::ProfileToJson(*run.profile) : json::object();
  json kernels = profile.contains("kernels") ? profile["kernels"] : json::array();

  http::Response response;
  std::vector<runtime::io::NamedTensor> outputs = runtime::io::OutputTensors(run.result);
  if (form == Form::kSafetensors) {
    runtime::io::SafetensorsFile file;
    file.tensors = std::move(outputs);
    file.metadata = {{"kiln.key", done.key},
                     {"kiln.device", done.device},
                     {"kiln.device_us", SixSignificantDigits(device_us)},
                     {"kiln.queue_ms", SixSignificantDigits(done.queue_ms)},
                     {"kiln.kernels", kernels.dump()},
                     {"kiln.chips", std::to_string(done.chips)}};
    if (!done.topology.empty()) file.metadata["kiln.topology"] = done.topology;
    Result<std::string> bytes = runtime::io::SerializeSafetensors(file);
    if (!bytes) return std::unexpected(service::InternalFailure("writing the outputs", bytes.error()));
    response = http::Response::WithBytes(200, http::MakeBytes(std::move(*bytes)), std::string(kSafetensorsType));
  } else {
    json values = json::array();
    const bool tuple = run.result.shape().IsTuple();
    const size_t count = tuple ? run.result.tuple_elements().size() : 1;
    for (size_t i = 0; i < count; ++i) {
      Result<json> value = LiteralToJson(tuple ? run.result.tuple_elements()[i] : run.result);
      if (!value) {
        return std::unexpected(
            value.error().WithContext("output " + std::to_string(i)).WithReason(std::string(kUnsupportedOutput)));
      }
      values.push_back(std::move(*value));
    }
    json body = {{"key", done.key},
                 {"chip", done.chip},
                 {"device", done.device},
                 {"topology", done.topology.empty() ? json(nullptr) : json(done.topology)},
                 {"chips", done.chips},
                 {"device_us", device_us},
                 {"flops", profile.value("flops", 0.0)},
                 {"bytes", profile.value("bytes", 0.0)},
                 {"ideal_bytes", profile.value("ideal_bytes", 0.0)},
                 {"hfu", profile.value("hfu", 0.0)},
                 {"queue_ms", done.queue_ms},
                 {"wall_ms", done.wall_ms},
                 {"outputs", std::move(values)},
                 {"kernels", kernels}};
    if (!run.profile) body["timing_error"] = run.profile.error().ToString();
    response = http::JsonResponse(200, body);
  }
  response.headers.Set("X-Kiln-Key", done.key);
  response.headers.Set("X-Kiln-Device", done.device);
  response.headers.Set("X-Kiln-Device-Us", SixSignificantDigits(device_us));
  response.headers.Set("X-Kiln-Queue-Ms", SixSignificantDigits(done.queue_ms));
  if (!done.topology.empty()) response.headers.Set("X-Kiln-Topology", done.topology);
  response.headers.Set("X-Kiln-Profile", ProfileSummary(kernels));
  return response;
}

}  // namespace

void KilnApi::Execute(Call call) {
  // The deadline counts from here: reading the inputs and the time queued
  // for a chip count.
  const auto received = std::chrono::steady_clock::now();
  service::ExecuteService& runs = engine_->execute();
  auto fail = [&](const Error& error) {
    runs.Refused();
    call.respond(http::ErrorResponse(error));
  };
  Result<cache::EntryId> id = engine_->entries().Find(call.tenant, call.request.PathParam("key").value_or(""));
  if (!id) return fail(id.error());
  Result<Form> form = RequestForm(call.request);
  if (!form) return fail(form.error());
  Result<std::shared_ptr<const service::ReadyProgram>> ready = runs.Program(*id);
  if (!ready) return fail(ready.error());
  if (!(*ready)->evaluable) {
    return fail(Error::Coded((*ready)->evaluable.error().code,
                             (*ready)->evaluable.error().ToString() + "; POST /v1/executables/" + id->key.Hex() +
                                 "/time times it without values")
                    .WithReason(std::string(service::kExecutionFailed)));
  }
  const std::vector<hlo::Shape>& parameters = (*ready)->parameter_shapes;
  Result<std::vector<hlo::Literal>> inputs = *form == Form::kSafetensors
                                                 ? InputsFromSafetensors(call.request.body, parameters)
                                                 : InputsFromJson(call.request.body, parameters);
  if (!inputs) return fail(inputs.error());
  Result<std::chrono::milliseconds> timeout = ExecuteTimeout(call.request, options_.execute_timeout);
  if (!timeout) return fail(timeout.error());

  const Form answer_form = AnswerForm(call.request, *form);
  service::ExecuteCall run{.id = *id,
                           .program = *ready,
                           .inputs = std::move(*inputs),
                           .json_answer = answer_form == Form::kJson,
                           .timeout = *timeout,
                           .received = received};
  if (call.request.cancel) run.cancelled = [cancel = call.request.cancel] { return cancel->cancelled(); };
  runs.Execute(std::move(run), [&runs, answer_form, respond = std::move(call.respond)](
                                   Result<service::ExecuteResult> done) mutable {
    if (!done) return respond(http::ErrorResponse(done.error()));
    Result<http::Response> response = RunResponse(*done, answer_form);
    if (!response) {
      runs.FailedToAnswer();
      return respond(http::ErrorResponse(response.error()));
    }
    respond(std::move(*response));
  });
}

}  // namespace kiln::api
