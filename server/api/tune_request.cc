#include "server/api/tune_request.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "server/api/api_reasons.h"
#include "server/service/compile_options.h"
#include "server/service/entry_view.h"
#include "server/service/reasons.h"
#include "server/service/tune_jobs.h"

namespace kiln::api {
namespace {

using nlohmann::json;

Error Invalid(std::string message, std::string_view reason) {
  return InvalidArgumentError(std::move(message)).WithReason(std::string(reason));
}

}  // namespace

Result<TuneRequest> ParseTuneRequest(std::string_view body) {
  json object = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return Invalid("the body is not valid JSON", kInvalidJson);
  if (!object.is_object()) {
    return Invalid("expected an object {\"hlo\", \"key\", \"chip\", \"options\", \"max_trials\", \"time_budget_s\", "
                   "\"seed\"}",
                   kInvalidJson);
  }
  TuneRequest out;
  out.options.chip = "v5e";
  bool trials_given = false, seconds_given = false;
  for (const auto& [field, value] : object.items()) {
    if (field == "hlo") {
      if (!value.is_string()) return Invalid("'hlo' must be a string: the module as HLO or StableHLO text", kInvalidJson);
      out.hlo = value.get<std::string>();
    } else if (field == "key") {
      std::optional<hlo::Hash128> key = value.is_string() ? service::ParseKeyHex(value.get<std::string>()) : std::nullopt;
      if (!key) return Invalid("'key' must be 32 lowercase hex digits", service::kInvalidKey);
      out.key = key;
    } else if (field == "chip") {
      if (!value.is_string()) return Invalid("'chip' must be a string such as \"v5e\"", service::kUnknownChip);
      if (auto set = service::SetChip(out.options, value.get<std::string>()); !set) return std::unexpected(set.error());
    } else if (field == "options") {
      if (auto set = service::ApplyJsonOptions(out.options, value); !set) return std::unexpected(set.error());
    } else if (field == "max_trials") {
      if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
        return Invalid("'max_trials' must be a whole number of trials above zero, got " + value.dump(),
                       service::kInvalidBudget);
      }
      out.budget.max_trials = value.get<int64_t>();
      trials_given = true;
    } else if (field == "time_budget_s") {
      if (!value.is_number() || !(value.get<double>() > 0)) {
        return Invalid("'time_budget_s' must be a number of seconds above zero, got " + value.dump(),
                       service::kInvalidBudget);
      }
      out.budget.max_seconds = value.get<double>();
      seconds_given = true;
    } else if (field == "seed") {
      if (!value.is_number_unsigned()) return Invalid("'seed' must be a non-negative integer", kInvalidJson);
      out.budget.seed = value.get<uint64_t>();
    } else {
      return Invalid("unknown field '" + field + "'; expected hlo, key, chip, options, max_trials, time_budget_s, seed",
                     kInvalidJson);
    }
  }
  if (!out.hlo && !out.key) return Invalid("send 'hlo' (the module to tune) or 'key' (its job)", kInvalidJson);
  if (out.options.plan != fusion::PlanKind::kHeuristic) {
    return Invalid("options: tuning starts from the heuristic plan; plan '" +
                       std::string(fusion::PlanKindName(out.options.plan)) + "' cannot be tuned",
                   service::kInvalidOptions);
  }
  if (auto fits = service::CheckScopedVmem(out.options); !fits) return std::unexpected(fits.error());
  if (!trials_given && !seconds_given) {
    out.budget.max_trials = kDefaultTuneTrials;
    out.budget.max_seconds = kDefaultTuneSeconds;
  }
  if (Status sane = autotune::CheckBudget(out.budget); !sane) {
    return Invalid(sane.error().message, service::kInvalidBudget);
  }
  return out;
}

}  // namespace kiln::api
