// POST and GET /v1/tune, GET and DELETE /v1/tune/{id}: autotuning jobs over
// the store's entries, as the tune service runs them
// (server/service/tune_service.h); with a shared tier, the fleet's jobs
// too (another server's job answers as a known one, 200, naming its
// `server`).
#include <charconv>
#include <nlohmann/json.hpp>

#include "server/api/api_reasons.h"
#include "server/api/kiln_api.h"
#include "server/api/tune_request.h"
#include "server/http/json_response.h"
#include "server/service/entry_json.h"

namespace kiln::api {
namespace {

using nlohmann::json;

json OptionalNumber(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json JobToJson(const service::TuneJobView& job) {
  json body = {
      {"id", job.id},
      {"key", job.entry.key.Hex()},
      {"chip", job.entry.chip},
      {"state", service::TuneStateName(job.state)},
      {"background", job.background},
      {"trials_done", job.trials},
      {"max_trials", job.max_trials > 0 ? json(job.max_trials) : json(nullptr)},
      {"time_budget_s", job.time_budget_s > 0 ? json(job.time_budget_s) : json(nullptr)},
      {"seed", job.seed},
      {"heuristic_us", OptionalNumber(job.heuristic_us)},
      {"best_us", OptionalNumber(job.best_us)},
      {"tuned_us", job.outcome && job.outcome->stored ? json(job.outcome->tuned_us) : json(nullptr)},
      {"accepted", job.outcome ? json(job.outcome->accepted) : json(nullptr)},
      {"stored", job.outcome ? job.outcome->stored : false},
      {"decision", job.outcome ? json(job.outcome->decision) : json(nullptr)},
      {"verification", job.outcome && job.outcome->accepted ? json(job.outcome->verification) : json(nullptr)},
      {"verified_kernels", job.outcome ? job.outcome->verified_kernels : 0},
      {"gain_us", job.outcome && job.outcome->accepted
                      ? json{{"tiles", job.outcome->tiling_gain_us},
                             {"fusion", job.outcome->fusion_gain_us},
                             {"bodies", job.outcome->body_gain_us},
                             {"schedule", job.outcome->schedule_gain_us}}
                      : json(nullptr)},
      {"error", job.error ? json(*job.error) : json(nullptr)},
      {"waiting_for_executes", job.waiting_for_runs},
      {"cancel_requested", job.cancel_requested},
      {"created", service::Rfc3339(job.created_ms)},
      {"finished", job.finished_ms ? json(service::Rfc3339(*job.finished_ms)) : json(nullptr)},
      {"server", job.server},
      {"takes_over", job.takes_over.empty() ? json(nullptr) : json(job.takes_over)},
  };
  return body;
}

http::Response JobResponse(int status, const service::TuneJobView& job) {
  http::Response response = http::JsonResponse(status, JobToJson(job));
  response.headers.Set("Location", "/v1/tune/" + job.id);
  return response;
}

// The {id} of the path: 16 lowercase hex digits, else 400 invalid_job_id.
Result<std::string> JobIdOf(const http::Request& request) {
  const std::string id(request.PathParam("id").value_or(""));
  bool valid = id.size() == 16;
  for (char c : id) valid = valid && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!valid) {
    return InvalidArgumentError("job id '" + id.substr(0, 64) + "': expected 16 lowercase hex digits")
        .WithReason(std::string(kInvalidJobId));
  }
  return id;
}

}  // namespace

void KilnApi::StartTune(Call call) {
  Result<TuneRequest> parsed = ParseTuneRequest(call.request.body);
  if (!parsed) return call.respond(http::ErrorResponse(parsed.error()));
  Result<service::TuneJobs::Submitted> submitted = engine_->tune().Start(service::TuneStart{
      .tenant = call.tenant,
      .hlo = std::move(parsed->hlo),
      .key = parsed->key,
      .options = parsed->options,
      .budget = parsed->budget,
  });
  if (!submitted) return call.respond(http::ErrorResponse(submitted.error()));
  call.respond(JobResponse(submitted->created ? 202 : 200, submitted->job));
}

void KilnApi::GetTune(Call call) {
  Result<std::string> id = JobIdOf(call.request);
  if (!id) return call.respond(http::ErrorResponse(id.error()));
  std::optional<service::TuneJobView> job = engine_->tune().Find(call.tenant, *id);
  if (!job) {
    return call.respond(http::ErrorResponse(NotFoundError("no tuning job " + *id + " for tenant " + call.tenant)));
  }
  call.respond(JobResponse(200, *job));
}

void KilnApi::ListTunes(Call call) {
  size_t limit = 100;
  if (auto value = call.request.Query("limit")) {
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), limit);
    if (ec != std::errc() || end != value->data() + value->size() || limit < 1 || limit > 1000) {
      return call.respond(http::ErrorResponse(
          InvalidArgumentError("query parameter limit: expected an integer in [1, 1000], got '" + std::string(*value) +
                               "'")
              .WithReason(std::string(kBadRequest))));
    }
  }
  json jobs = json::array();
  for (const service::TuneJobView& job : engine_->tune().List(call.tenant, limit)) jobs.push_back(JobToJson(job));
  call.respond(http::JsonResponse(200, json{{"jobs", std::move(jobs)}}));
}

void KilnApi::CancelTune(Call call) {
  Result<std::string> id = JobIdOf(call.request);
  if (!id) return call.respond(http::ErrorResponse(id.error()));
  Result<service::TuneJobView> job = engine_->tune().Cancel(call.tenant, *id);
  if (!job) return call.respond(http::ErrorResponse(job.error()));
  // A running job stops after its current trial: 202, poll for "cancelled".
  call.respond(JobResponse(job->state == service::TuneState::kCancelled ? 200 : 202, *job));
}

}  // namespace kiln::api
