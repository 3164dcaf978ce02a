#include "server/service/tuned_entry.h"

#include "base/version.h"
#include "cache/components.h"
#include "server/service/entry_json.h"

namespace kiln::service {

cache::PutRequest TunedPut(const std::string& tenant, const autotune::TuneResult& result,
                           const driver::CompileOptions& options, std::string_view source_text) {
  cache::EntryId id{tenant, result.fingerprint.key, result.chip, kCompilerFormatVersion};
  EntryNotes notes;
  notes.options = nlohmann::json::parse(driver::OptionsJson(options));
  notes.kernels = 0;
  for (const autotune::KernelComparison& k : result.kernels) notes.kernels += k.tuned_us.has_value();
  notes.parameters = result.fingerprint.parameter_shape_text;
  return cache::PutRequest{
      .id = id,
      .options = SerializeEntryNotes(notes),
      .plan_kind = runtime::PlanKind::kTuned,
      .executable = std::string_view(reinterpret_cast<const char*>(result.tuned_executable.data()),
                                    result.tuned_executable.size()),
      // A hit saves the heuristic compile; the search is tuning time.
      .compile_seconds = result.heuristic_compile_ms / 1000,
      .device_seconds = result.tuned_us * 1e-6,
      .tune_seconds = result.seconds,
      .components = cache::KeyComponentsOf(result.fingerprint),
      .source_text = source_text,
  };
}

Status StoreTunedEntry(cache::CacheStore& store, const std::string& tenant, const autotune::TuneResult& result,
                       const driver::CompileOptions& options, std::optional<uint64_t> expected_checksum,
                       std::string_view source_text) {
  const cache::PutRequest put = TunedPut(tenant, result, options, source_text);
  if (expected_checksum) return store.ReplaceWithTuned(put, *expected_checksum);
  KILN_ASSIGN_OR_RETURN(std::optional<cache::EntryMetadata> stored, store.GetMetadata(put.id));
  if (!stored) return store.Put(put);
  return store.ReplaceWithTuned(put, stored->checksum);
}

}  // namespace kiln::service
