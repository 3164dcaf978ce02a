#include "server/service/entry_json.h"

#include <ctime>

namespace kiln::service {

using nlohmann::json;

std::string SerializeEntryNotes(const EntryNotes& notes) {
  return json{{"options", notes.options}, {"kernels", notes.kernels}, {"parameters", notes.parameters}}.dump();
}

EntryNotes ParseEntryNotes(std::string_view text) {
  EntryNotes notes;
  json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return notes;
  if (!object.contains("options")) {
    notes.options = std::move(object);  // a bare options object
    return notes;
  }
  if (object["options"].is_object()) notes.options = object["options"];
  if (object.contains("kernels") && object["kernels"].is_number_integer()) notes.kernels = object["kernels"].get<int64_t>();
  if (object.contains("parameters") && object["parameters"].is_array()) {
    for (const json& parameter : object["parameters"]) {
      if (parameter.is_string()) notes.parameters.push_back(parameter.get<std::string>());
    }
  }
  return notes;
}

std::string Rfc3339(int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(unix_ms % 1000));
  return text;
}

std::string EntryPlanName(const cache::EntryMetadata& metadata) {
  return std::string(cache::PlanKindName(metadata.plan_kind));
}

json EntryToJson(const cache::EntryMetadata& metadata) {
  const EntryNotes notes = ParseEntryNotes(metadata.options);
  const bool ever_hit = metadata.hit_count > 0;
  return json{
      {"key", metadata.id.key.Hex()},
      {"tenant", metadata.id.tenant},
      {"chip", metadata.id.chip},
      {"plan", EntryPlanName(metadata)},
      {"options", notes.options},
      {"format_version", metadata.id.format_version},
      {"raw_bytes", metadata.raw_bytes},
      {"stored_bytes", metadata.stored_bytes},
      {"compile_ms", metadata.compile_seconds * 1000},
      {"tune_ms", metadata.tune_seconds * 1000},
      {"estimated_us", metadata.device_seconds * 1e6},
      {"kernels", notes.kernels},
      {"hits", metadata.hit_count},
      {"last_hit", ever_hit ? json(Rfc3339(metadata.last_hit_ms)) : json(nullptr)},
      {"created", Rfc3339(metadata.created_ms)},
      {"quarantined", metadata.quarantined},
  };
}

}  // namespace kiln::service
