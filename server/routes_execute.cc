// POST /v1/executables/{key}/execute: inputs in, a run on a pool chip of
// the executable's kind, outputs and the device profile out.
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/io/safetensors.h"
#include "runtime/io/tensor_names.h"
#include "runtime/timing/profile_output.h"
#include "runtime/spmd/global_arguments.h"
#include "runtime/timing/timed_execution.h"
#include "runtime/timing/timed_slice_execution.h"
#include "server/execute_inputs.h"
#include "server/execute_limits.h"
#include "server/http/header_map.h"
#include "server/http/json_response.h"
#include "server/json_tensors.h"
#include "server/kiln_service.h"
#include "server/service_errors.h"

namespace kiln::server {
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
      .WithReason("unsupported_media_type");
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

// One run from submission to answer; shared by the pool job's two callbacks.
struct RunState {
  std::shared_ptr<const ReadyProgram> program;
  std::vector<hlo::Literal> inputs;
  std::string key;
  std::string kind;
  Form answer_form = Form::kJson;
  int64_t step_budget = 0;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<runtime::Interrupt> interrupt = std::make_shared<runtime::Interrupt>();
  http::Responder respond;
  bool started = false;  // left the kind's queue
  std::optional<runtime::timing::TimedExecution> run;
};

// Runs the program on its chip, or on every chip of its slice (global
// arguments split, the global result assembled).
Result<runtime::timing::TimedExecution> RunOnChips(const ReadyProgram& ready, std::span<const hlo::Literal> inputs,
                                                   const runtime::EvalOptions& eval) {
  if (ready.topology.empty()) return runtime::timing::ExecuteTimed(*ready.program, *ready.timer, inputs, eval);
  const runtime::Program& program = ready.program->program();
  KILN_ASSIGN_OR_RETURN(auto chip_args, runtime::ChipArguments(program, inputs, ready.slice.devices()));
  KILN_ASSIGN_OR_RETURN(runtime::timing::TimedSliceExecution run,
                        runtime::timing::ExecuteTimedOnSlice(*ready.program, *ready.timer, ready.slice, chip_args, eval));
  runtime::timing::TimedExecution out;
  KILN_ASSIGN_OR_RETURN(out.result, runtime::ProgramResult(program, std::move(run.results)));
  out.profile = std::move(run.profile);
  return out;
}

}  // namespace

Result<std::shared_ptr<const ReadyProgram>> KilnService::ReadyProgramFor(const cache::EntryId& id) {
  if (std::shared_ptr<const ReadyProgram> ready = programs_.Find(id)) return ready;
  Result<std::optional<cache::CacheHit>> hit = store_->Get(id);
  if (!hit) return std::unexpected(InternalFailure("cache lookup", hit.error()));
  if (!*hit) return NotFoundError("no executable with key " + id.key.Hex() + " for tenant " + id.tenant);
  const std::string& bytes = (*hit)->entry->executable;
  auto ready = LoadReadyProgram(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!ready) return std::unexpected(InternalFailure("loading executable " + id.key.Hex(), ready.error()));
  // Bytes another process wrote into the store's file are held to what
  // every other reader of an entry checks: the program is the key's.
  const runtime::Program& program = (*ready)->program->program();
  if (program.key != id.key.Hex() || program.chip != id.chip) {
    return DataLossError("entry " + id.ToString() + " holds a program compiled as " + program.key + " for " +
                         program.chip + "; it is not served");
  }
  programs_.Insert(id, *ready);
  return *ready;
}

void KilnService::Execute(Call call) {
  // The deadline counts from here: reading the inputs and the time queued
  // for a chip count.
  const auto received = std::chrono::steady_clock::now();
  metrics_.ExecuteRequested();
  auto fail = [&](const Error& error) {
    metrics_.ExecuteFailed();
    call.respond(http::ErrorResponse(error));
  };
  Result<cache::EntryId> id = FindEntry(call.tenant, call.request.PathParam("key").value_or(""));
  if (!id) return fail(id.error());
  Result<Form> form = RequestForm(call.request);
  if (!form) return fail(form.error());
  Result<std::shared_ptr<const ReadyProgram>> ready = ReadyProgramFor(*id);
  if (!ready) return fail(ready.error());
  if (!(*ready)->evaluable) {
    return fail(Error::Coded((*ready)->evaluable.error().code,
                             (*ready)->evaluable.error().ToString() + "; POST /v1/executables/" + id->key.Hex() +
                                 "/time times it without values")
                    .WithReason("execution_failed"));
  }
  const std::vector<hlo::Shape>& parameters = (*ready)->parameter_shapes;
  Result<std::vector<hlo::Literal>> inputs = *form == Form::kSafetensors
                                                 ? InputsFromSafetensors(call.request.body, parameters)
                                                 : InputsFromJson(call.request.body, parameters);
  if (!inputs) return fail(inputs.error());
  Result<std::chrono::milliseconds> timeout = ExecuteTimeout(call.request, options_.execute_timeout);
  if (!timeout) return fail(timeout.error());

  const runtime::Program& program = (*ready)->program->program();
  auto state = std::make_shared<RunState>();
  state->program = *ready;
  state->inputs = std::move(*inputs);
  state->key = id->key.Hex();
  state->kind = program.chip;
  state->answer_form = AnswerForm(call.request, *form);
  state->step_budget = options_.execute_step_budget;
  state->timeout = *timeout;
  state->respond = std::move(call.respond);

  runtime::pool::Job job;
  job.client = call.tenant;
  job.chip_kind = program.chip;
  job.topology = (*ready)->topology;
  job.hbm_bytes = program.peak_hbm_bytes;
  job.host_bytes = RunHostBytes(**ready, state->answer_form == Form::kJson);
  job.deadline = received + *timeout;
  job.interrupt = state->interrupt;
  if (call.request.cancel) {
    job.cancelled = [cancel = call.request.cancel] { return cancel->cancelled(); };
  }
  job.run = [this, state](const runtime::pool::ChipContext& chip) -> Result<double> {
    {
      std::lock_guard lock(pool_mu_);
      --queued_by_kind_[state->kind];
      state->started = true;
      running_key_[chip.index] = state->key;
    }
    runtime::EvalOptions eval;
    eval.step_budget = state->step_budget;
    eval.interrupt = state->interrupt.get();
    Result<runtime::timing::TimedExecution> run = RunOnChips(*state->program, state->inputs, eval);
    {
      std::lock_guard lock(pool_mu_);
      running_key_[chip.index].clear();
    }
    state->inputs.clear();
    if (!run) return std::unexpected(run.error());
    const double seconds = run->profile ? run->profile->seconds : 0;
    state->run = std::move(*run);
    return seconds;
  };
  job.done = [this, state](Status status, const runtime::pool::JobStats& stats) {
    tune_gate_.RunEnded();
    if (!state->started) {
      std::lock_guard lock(pool_mu_);
      --queued_by_kind_[state->kind];
    }
    if (!status) {
      metrics_.ExecuteFailed();
      metrics_.ExecuteEnded(runtime::pool::JobEndName(stats.end));
      EndedRun ended{.key = state->key,
                     .device = stats.chip < 0 ? "" : state->kind + ":" + std::to_string(PerKindIndex(stats.chip)),
                     .timeout = state->timeout,
                     .queued_seconds = stats.queued_seconds,
                     .run_seconds = stats.run_seconds,
                     .error = status.error()};
      return state->respond(http::ErrorResponse(EndedRunError(stats.end, ended)));
    }
    runtime::timing::TimedExecution& run = *state->run;
    const std::string device = state->kind + ":" + std::to_string(PerKindIndex(stats.chip));
    const std::string& topology = state->program->program->program().topology;
    int64_t chips = 1;
    for (int d : state->program->topology) chips *= d;
    const double device_us = run.profile ? run.profile->seconds * 1e6 : 0;
    const double queue_ms = stats.queued_seconds * 1000;
    metrics_.Executed(state->kind, run.profile ? run.profile->seconds : 0);
    json profile = run.profile ? runtime::timing::ProfileToJson(*run.profile) : json::object();
    json kernels = profile.contains("kernels") ? profile["kernels"] : json::array();
    const std::string kernels_text = kernels.dump();

    http::Response response;
    std::vector<runtime::io::NamedTensor> outputs = runtime::io::OutputTensors(run.result);
    if (state->answer_form == Form::kSafetensors) {
      runtime::io::SafetensorsFile file;
      file.tensors = std::move(outputs);
      file.metadata = {{"kiln.key", state->key},         {"kiln.device", device},
                       {"kiln.device_us", SixSignificantDigits(device_us)}, {"kiln.queue_ms", SixSignificantDigits(queue_ms)},
                       {"kiln.kernels", kernels_text}, {"kiln.chips", std::to_string(chips)}};
      if (!topology.empty()) file.metadata["kiln.topology"] = topology;
      Result<std::string> bytes = runtime::io::SerializeSafetensors(file);
      if (!bytes) {
        metrics_.ExecuteFailed();
        return state->respond(http::ErrorResponse(InternalFailure("writing the outputs", bytes.error())));
      }
      response = http::Response::WithBytes(200, http::MakeBytes(std::move(*bytes)), std::string(kSafetensorsType));
    } else {
      json values = json::array();
      const bool tuple = run.result.shape().IsTuple();
      const size_t count = tuple ? run.result.tuple_elements().size() : 1;
      for (size_t i = 0; i < count; ++i) {
        Result<json> value = LiteralToJson(tuple ? run.result.tuple_elements()[i] : run.result);
        if (!value) {
          metrics_.ExecuteFailed();
          return state->respond(http::ErrorResponse(
              value.error().WithContext("output " + std::to_string(i)).WithReason("unsupported_output")));
        }
        values.push_back(std::move(*value));
      }
      json body = {{"key", state->key},
                   {"chip", state->kind},
                   {"device", device},
                   {"topology", topology.empty() ? json(nullptr) : json(topology)},
                   {"chips", chips},
                   {"device_us", device_us},
                   {"flops", profile.value("flops", 0.0)},
                   {"bytes", profile.value("bytes", 0.0)},
                   {"ideal_bytes", profile.value("ideal_bytes", 0.0)},
                   {"hfu", profile.value("hfu", 0.0)},
                   {"queue_ms", queue_ms},
                   {"wall_ms", stats.run_seconds * 1000},
                   {"outputs", std::move(values)},
                   {"kernels", kernels}};
      if (!run.profile) body["timing_error"] = run.profile.error().ToString();
      response = http::JsonResponse(200, body);
    }
    response.headers.Set("X-Kiln-Key", state->key);
    response.headers.Set("X-Kiln-Device", device);
    response.headers.Set("X-Kiln-Device-Us", SixSignificantDigits(device_us));
    response.headers.Set("X-Kiln-Queue-Ms", SixSignificantDigits(queue_ms));
    if (!topology.empty()) response.headers.Set("X-Kiln-Topology", topology);
    response.headers.Set("X-Kiln-Profile", ProfileSummary(kernels));
    state->respond(std::move(response));
  };

  {
    std::lock_guard lock(pool_mu_);
    ++queued_by_kind_[state->kind];
  }
  tune_gate_.RunSubmitted();  // background tuning pauses until the run ends
  if (auto submitted = pool_->Submit(std::move(job)); !submitted) {
    tune_gate_.RunEnded();
    {
      std::lock_guard lock(pool_mu_);
      --queued_by_kind_[state->kind];
    }
    metrics_.ExecuteFailed();
    if (submitted.error().reason() == runtime::pool::kTooLargeToRun) metrics_.ExecuteEnded("too_large");
    return state->respond(
        http::ErrorResponse(RefusedRunError(submitted.error(), state->key, state->kind, pool_->spec().ToString())));
  }
}

}  // namespace kiln::server
