#include "tools/tune_store.h"

#include "cache/components.h"
#include "server/auth.h"
#include "server/entry_json.h"
#include "server/serve_options.h"

namespace kiln::tools {
namespace {

Status StoreTuned(cache::CacheStore& store, const autotune::TuneResult& result,
                  const driver::CompileOptions& options) {
  cache::EntryId id{std::string(server::kDefaultTenant), result.fingerprint.key, result.chip,
                    kCompilerFormatVersion};
  server::EntryNotes notes;
  notes.options = nlohmann::json::parse(driver::OptionsJson(options));
  notes.kernels = 0;
  for (const autotune::KernelComparison& k : result.kernels) notes.kernels += k.tuned_us.has_value();
  notes.parameters = result.fingerprint.parameter_shape_text;
  const std::string executable(result.tuned_executable.begin(), result.tuned_executable.end());
  cache::PutRequest put{
      .id = id,
      .options = server::SerializeEntryNotes(notes),
      .plan_kind = runtime::PlanKind::kTuned,
      .executable = executable,
      .compile_seconds = result.seconds,
      .device_seconds = result.tuned_us * 1e-6,
      .components = cache::KeyComponentsOf(result.fingerprint),
  };
  KILN_ASSIGN_OR_RETURN(std::optional<cache::EntryMetadata> stored, store.GetMetadata(id));
  if (!stored) return store.Put(put);
  return store.ReplaceWithTuned(put, stored->checksum);
}

}  // namespace

StoreOutcome StoreTuneResult(cache::CacheStore& store, const autotune::TuneResult& result,
                             const driver::CompileOptions& options, int64_t records) {
  StoreOutcome outcome;
  outcome.requested = true;
  outcome.records = records;
  if (!result.accepted) {
    outcome.note = "nothing stored: the heuristic stays (" + std::to_string(records) + " tuning records kept)";
  } else if (Status stored = StoreTuned(store, result, options); !stored) {
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
  Result<std::chrono::milliseconds> parsed = server::ParseDuration(budget);
  if (!parsed) return parsed.error().WithContext("--budget");
  options.max_seconds = static_cast<double>(parsed->count()) / 1000;
  KILN_RETURN_IF_ERROR(autotune::CheckBudget(options));
  return options;
}

}  // namespace kiln::tools
