#include "tools/tune_store.h"

#include "base/units.h"
#include "server/service/tenants.h"
#include "server/service/tuned_entry.h"

namespace kiln::tools {

StoreOutcome StoreTuneResult(cache::CacheStore& store, const autotune::TuneResult& result,
                             const driver::CompileOptions& options, int64_t records, std::string_view source_text) {
  StoreOutcome outcome;
  outcome.requested = true;
  outcome.records = records;
  if (!result.accepted) {
    outcome.note = "nothing stored: the heuristic stays (" + std::to_string(records) + " tuning records kept)";
  } else if (Status stored = service::StoreTunedEntry(store, std::string(service::kDefaultTenant), result, options,
                                                       std::nullopt, source_text);
             !stored) {
    if (stored.error().code == ErrorCode::kFailedPrecondition) {
      outcome.already_tuned = true;  // not a failure: a plan as fast is served
      outcome.note = "nothing stored: a tuned entry at least as fast is stored under key " + result.key;
    } else {
      outcome.note = "the tuned executable was not stored: " + stored.error().ToString();
    }
  } else {
    outcome.stored = true;
    outcome.note = "stored as plan tuned under key " + result.key + " (" + std::to_string(records) +
                   " tuning records kept)";
  }
  return outcome;
}

Result<autotune::TuneOptions> TuneOptionsForBudget(const std::string& budget, uint64_t seed) {
  autotune::TuneOptions options;
  options.seed = seed;
  Result<std::chrono::milliseconds> parsed = ParseDuration(budget);
  if (!parsed) return parsed.error().WithContext("--budget");
  options.max_seconds = static_cast<double>(parsed->count()) / 1000;
  KILN_RETURN_IF_ERROR(autotune::CheckBudget(options));
  return options;
}

}  // namespace kiln::tools
