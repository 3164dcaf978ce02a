// GET /v1/stats, /v1/entries, /v1/pool, /metrics and /healthz.
#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "base/host_cores.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/kernels/isa_level.h"
#include "server/api/api_reasons.h"
#include "server/api/kiln_api.h"
#include "server/http/json_response.h"
#include "server/service/entry_json.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::api {
namespace {

using nlohmann::json;

// Every entry of `tenant` (optionally of one chip), in row order.
Result<std::vector<cache::EntryMetadata>> AllEntries(cache::CacheStore& store, const std::string& tenant,
                                                     std::optional<std::string> chip) {
  std::vector<cache::EntryMetadata> all;
  cache::ListFilter filter{.tenant = tenant, .chip = std::move(chip), .limit = 1000};
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::vector<cache::EntryMetadata> page, store.List(filter));
    if (page.empty()) break;
    filter.after_row_id = page.back().row_id;
    const bool last = page.size() < static_cast<size_t>(filter.limit);
    all.insert(all.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
    if (last) break;
  }
  return all;
}

std::string Hex(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::optional<std::string> Unhex(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 2, value, 16);
    if (ec != std::errc() || end != text.data() + i + 2) return std::nullopt;
    out.push_back(static_cast<char>(value));
  }
  return out;
}

int64_t SortValue(const cache::EntryMetadata& entry, std::string_view sort) {
  if (sort == "last_hit") return entry.hit_count > 0 ? entry.last_hit_ms : 0;
  if (sort == "hits") return entry.hit_count;
  return entry.created_ms;
}

}  // namespace

void KilnApi::Stats(Call call) {
  // Running totals kept by the store: no scan of the entries.
  Result<std::shared_ptr<const cache::StoreTotals>> totals = engine_->store().Totals();
  if (!totals) return call.respond(http::ErrorResponse(service::InternalFailure("cache totals", totals.error())));
  const cache::NamespaceTotals& mine = (*totals)->Of(call.tenant);
  json chips = json::array();
  for (const auto& [chip, figures] : mine.live_by_chip) {
    chips.push_back({{"chip", chip}, {"entries", figures.entries}, {"stored_bytes", figures.stored_bytes}});
  }
  const service::CompileCounters compiles = engine_->metrics().compile_counters();
  const service::TuneCounts tuning = engine_->tune().counts();
  const service::ExecuteCounters executions = engine_->metrics().execute_counters();
  const int64_t answered = compiles.hits + compiles.misses + compiles.joined;
  json body = {
      {"tenant", call.tenant},
      {"version", options_.version},
      {"format_version", kCompilerFormatVersion},
      {"uptime_s", engine_->uptime_seconds()},
      {"entries", mine.live.entries},
      {"raw_bytes", mine.live.raw_bytes},
      {"stored_bytes", mine.live.stored_bytes},
      {"max_bytes", options_.max_store_bytes > 0 ? json(options_.max_store_bytes) : json(nullptr)},
      {"compiles",
       {{"requests", compiles.requests},
        {"hits", compiles.hits},
        {"misses", compiles.misses},
        {"joined", compiles.joined},
        {"fast_path", compiles.fast_path},
        {"errors", compiles.errors},
        {"hit_rate", answered == 0 ? 0.0 : static_cast<double>(compiles.hits + compiles.joined) / answered},
        {"compile_ms_total", compiles.compile_ms_total},
        {"compile_ms_saved", compiles.compile_ms_saved}}},
      {"tuning",
       {{"jobs_done", tuning.done}, {"trials", tuning.trials}, {"tune_ms_total", tuning.seconds * 1000}}},
      {"executions",
       {{"requests", executions.requests}, {"errors", executions.errors}, {"device_us_total", executions.device_us_total}}},
      {"evictions", (*totals)->evicted_total},
      {"quarantined", mine.quarantined.entries},
      {"by_chip", std::move(chips)},
  };
  call.respond(http::JsonResponse(200, body));
}

void KilnApi::StatsHistoryRoute(Call call) {
  json samples = json::array();
  for (const service::StatsSample& sample : engine_->history().Samples()) {
    samples.push_back({{"time", service::Rfc3339(sample.unix_ms)},
                       {"hits", sample.hits},
                       {"misses", sample.misses},
                       {"compile_seconds_saved", sample.compile_seconds_saved},
                       {"executions", sample.executions},
                       {"device_seconds", sample.device_seconds}});
  }
  call.respond(http::JsonResponse(
      200, json{{"interval_s", std::chrono::duration<double>(engine_->history().interval()).count()}, {"samples", samples}}));
}

void KilnApi::Entries(Call call) {
  const http::Request& request = call.request;
  std::optional<std::string> chip;
  if (auto value = request.Query("chip")) {
    const runtime::ChipSpec* spec = runtime::FindChip(*value);
    if (spec == nullptr) {
      return call.respond(
          http::ErrorResponse(InvalidArgumentError("query parameter chip: unknown chip '" + std::string(*value) + "'")
                                  .WithReason(std::string(service::kUnknownChip))));
    }
    chip = std::string(spec->name);  // names match case-insensitively; entries store the spec's
  }
  std::string plan(request.Query("plan").value_or(""));
  if (!plan.empty() && plan != "none" && plan != "heuristic" && plan != "given" && plan != "tuned") {
    return call.respond(http::ErrorResponse(InvalidArgumentError("query parameter plan: expected none, heuristic, "
                                                                 "given or tuned, got '" +
                                                                 plan + "'")
                                                .WithReason(std::string(kBadRequest))));
  }
  std::string sort(request.Query("sort").value_or("created"));
  if (sort != "created" && sort != "last_hit" && sort != "hits") {
    return call.respond(http::ErrorResponse(InvalidArgumentError("query parameter sort: expected created, last_hit "
                                                                 "or hits, got '" +
                                                                 sort + "'")
                                                .WithReason(std::string(kBadRequest))));
  }
  int limit = 100;
  if (auto value = request.Query("limit")) {
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), limit);
    if (ec != std::errc() || end != value->data() + value->size() || limit < 1 || limit > 1000) {
      return call.respond(http::ErrorResponse(InvalidArgumentError("query parameter limit: expected an integer in "
                                                                   "[1, 1000], got '" +
                                                                   std::string(*value) + "'")
                                                  .WithReason(std::string(kBadRequest))));
    }
  }
  // Cursor: hex of "sort|chip|plan|value|row_id", the last entry returned.
  const std::string scope = sort + "|" + chip.value_or("") + "|" + plan + "|";
  std::optional<std::pair<int64_t, int64_t>> after;
  if (auto value = request.Query("cursor"); value && !value->empty()) {
    std::optional<std::string> text = Unhex(*value);
    int64_t sort_value = 0, row_id = 0;
    if (text && text->starts_with(scope)) {
      std::string_view rest = std::string_view(*text).substr(scope.size());
      size_t bar = rest.find('|');
      auto a = std::from_chars(rest.data(), rest.data() + std::min(bar, rest.size()), sort_value);
      auto b = bar == std::string_view::npos ? std::from_chars_result{nullptr, std::errc::invalid_argument}
                                             : std::from_chars(rest.data() + bar + 1, rest.data() + rest.size(), row_id);
      if (a.ec == std::errc() && b.ec == std::errc() && b.ptr == rest.data() + rest.size()) after = {sort_value, row_id};
    }
    if (!after) {
      return call.respond(http::ErrorResponse(InvalidArgumentError("query parameter cursor: not a cursor of this "
                                                                   "listing (same chip, plan and sort)")
                                                  .WithReason(std::string(kBadRequest))));
    }
  }
  Result<std::vector<cache::EntryMetadata>> entries = AllEntries(engine_->store(), call.tenant, chip);
  if (!entries) return call.respond(http::ErrorResponse(service::InternalFailure("cache listing", entries.error())));
  std::vector<const cache::EntryMetadata*> chosen;
  for (const cache::EntryMetadata& entry : *entries) {
    if (!plan.empty() && service::EntryPlanName(entry) != plan) continue;
    std::pair<int64_t, int64_t> position{SortValue(entry, sort), entry.row_id};
    if (after && !(position < *after)) continue;
    chosen.push_back(&entry);
  }
  // Newest, most recent or most hit first; row id breaks ties.
  std::sort(chosen.begin(), chosen.end(), [&](const cache::EntryMetadata* a, const cache::EntryMetadata* b) {
    return std::pair(SortValue(*a, sort), a->row_id) > std::pair(SortValue(*b, sort), b->row_id);
  });
  json page = json::array();
  for (size_t i = 0; i < chosen.size() && i < static_cast<size_t>(limit); ++i) page.push_back(service::EntryToJson(*chosen[i]));
  json next = nullptr;
  if (chosen.size() > static_cast<size_t>(limit)) {
    const cache::EntryMetadata& last = *chosen[limit - 1];
    next = Hex(scope + std::to_string(SortValue(last, sort)) + "|" + std::to_string(last.row_id));
  }
  call.respond(http::JsonResponse(200, {{"entries", std::move(page)}, {"next_cursor", std::move(next)}}));
}

void KilnApi::Pool(Call call) {
  const runtime::pool::PoolStatus status = engine_->pool().status();
  json chips = json::array();
  std::map<std::string, json> kinds;
  for (const runtime::pool::ChipStatus& chip : status.chips) {
    chips.push_back({{"id", chip.kind + ":" + std::to_string(chip.kind_index)},
                     {"kind", chip.kind},
                     {"index", chip.kind_index},
                     {"busy", chip.busy},
                     {"utilization", std::clamp(chip.utilization, 0.0, 1.0)},
                     {"executions", chip.jobs_run},
                     {"device_us_total", chip.device_seconds * 1e6},
                     {"current_key", chip.busy && !chip.label.empty() ? json(chip.label) : json(nullptr)}});
    json& kind = kinds[chip.kind];
    if (kind.is_null()) {
      auto queued = status.queued_by_kind.find(chip.kind);
      kind = {{"kind", chip.kind},
              {"chips", 0},
              {"busy", 0},
              {"queue_depth", queued == status.queued_by_kind.end() ? 0 : queued->second},
              {"queue_capacity", options_.pool_queue_capacity}};
    }
    kind["chips"] = kind["chips"].get<int>() + 1;
    kind["busy"] = kind["busy"].get<int>() + (chip.busy ? 1 : 0);
  }
  json kind_list = json::array();
  for (auto& [name, kind] : kinds) kind_list.push_back(std::move(kind));
  call.respond(http::JsonResponse(200, {{"chips", std::move(chips)},
                                        {"kinds", std::move(kind_list)},
                                        {"queue_depth", status.queued},
                                        {"execute_timeout_ms", options_.execute_timeout.count()},
                                        {"host_memory",
                                         {{"budget_bytes", status.host_memory_budget},
                                          {"in_use_bytes", status.host_memory_in_use},
                                          {"waiting_runs", status.waiting_for_memory},
                                          {"busy_total", status.memory_busy_total},
                                          {"refused_total", status.memory_refused_total}}},
                                        {"stopped",
                                         {{"deadline_total", status.deadline_total},
                                          {"cancelled_total", status.cancelled_total}}}}));
}

void KilnApi::Metrics(Call call) {
  engine_->RefreshGauges();
  call.respond(http::Response::Text(200, engine_->metrics().registry().RenderPrometheus(),
                                    std::string(metrics::kPrometheusContentType)));
}

http::Response KilnApi::Health() const {
  // Draining: the transport stopped taking connections and finishes the
  // requests it has; a load balancer should look elsewhere.
  const bool draining = draining_ && draining_();
  // Still serving when the store cannot write (hits; compiles uncached):
  // `store` says so, from memory.
  const cache::StorageHealth storage = engine_->store().Health();
  json body = {{"status", draining ? "draining" : "ok"},
               {"version", options_.version},
               {"uptime_s", engine_->uptime_seconds()},
               {"kernels_isa", runtime::IsaLevelName(runtime::ActiveIsaLevel())},
               {"host_cores", HostCores::Get().total()},
               {"store", storage.problem == cache::StorageProblem::kNone
                             ? "ok"
                             : std::string(cache::StorageProblemName(storage.problem))}};
  if (!storage.message.empty()) body["store_message"] = storage.message;
  // The shared tier being down only costs latency (compiles stay local):
  // reported, not a reason to take the server out of rotation.
  if (cache::shared::SharedTier* tier = engine_->shared_tier(); tier != nullptr) {
    const cache::shared::SharedHealth shared = tier->Health();
    body["shared"] = {{"state", shared.up ? "up" : "down"}};
    if (!shared.last_error.empty()) body["shared"]["last_error"] = shared.last_error;
    if (!shared.up) body["shared"]["retry_in_ms"] = shared.retry_in_ms;
  }
  http::Response response = http::JsonResponse(draining ? 503 : 200, body);
  if (draining) response.headers.Set("Retry-After", "1");
  return response;
}

}  // namespace kiln::api
