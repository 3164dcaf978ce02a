#include "cache/shared/fleet_events.h"

#include <charconv>
#include <vector>

namespace kiln::cache::shared {
namespace {

std::string_view KindName(FleetEventKind kind) {
  switch (kind) {
    case FleetEventKind::kPublished:
      return "published";
    case FleetEventKind::kReleased:
      return "released";
    case FleetEventKind::kFailed:
      return "failed";
  }
  return "?";
}

std::optional<FleetEventKind> KindNamed(std::string_view name) {
  for (FleetEventKind kind : {FleetEventKind::kPublished, FleetEventKind::kReleased, FleetEventKind::kFailed}) {
    if (KindName(kind) == name) return kind;
  }
  return std::nullopt;
}

template <typename Int>
std::optional<Int> Number(std::string_view text) {
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const size_t tab = line.find('\t');
    fields.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return fields;
    line.remove_prefix(tab + 1);
  }
}

}  // namespace

EntryVersion VersionOf(const EntryMetadata& metadata) {
  return EntryVersion{.rank = metadata.plan_kind == PlanKind::kTuned ? 1 : 0, .created_ms = metadata.created_ms};
}

std::string FormatVersion(const EntryVersion& version) {
  return std::to_string(version.rank) + ":" + std::to_string(version.created_ms);
}

std::optional<EntryVersion> ParseVersion(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::optional<int> rank = Number<int>(text.substr(0, colon));
  std::optional<int64_t> created = Number<int64_t>(text.substr(colon + 1));
  if (!rank || !created || *rank < 0 || *rank > 1) return std::nullopt;
  return EntryVersion{.rank = *rank, .created_ms = *created};
}

std::string EncodeFleetEvent(const FleetEvent& event) {
  std::string line = std::string(KindName(event.kind)) + "\t" + event.id.tenant + "\t" + event.id.key.Hex() + "\t" +
                     event.id.chip + "\t" + std::to_string(event.id.format_version);
  if (event.kind == FleetEventKind::kPublished) line += "\t" + FormatVersion(event.version);
  return line;
}

std::optional<FleetEvent> DecodeFleetEvent(std::string_view message) {
  const std::vector<std::string_view> fields = Fields(message);
  if (fields.size() < 5) return std::nullopt;
  FleetEvent event;
  std::optional<FleetEventKind> kind = KindNamed(fields[0]);
  if (!kind) return std::nullopt;
  event.kind = *kind;
  if (fields.size() != (event.kind == FleetEventKind::kPublished ? 6u : 5u)) return std::nullopt;
  if (!ValidateName("tenant", fields[1]) || !ValidateName("chip", fields[3])) return std::nullopt;
  Result<Hash128> key = ParseHash128(fields[2]);
  std::optional<uint32_t> format = Number<uint32_t>(fields[4]);
  if (!key || !format) return std::nullopt;
  event.id = EntryId{std::string(fields[1]), *key, std::string(fields[3]), *format};
  if (event.kind == FleetEventKind::kPublished) {
    std::optional<EntryVersion> version = ParseVersion(fields[5]);
    if (!version) return std::nullopt;
    event.version = *version;
  }
  return event;
}

}  // namespace kiln::cache::shared
