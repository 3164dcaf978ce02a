#include "server/service/entry_view.h"

#include "server/service/entry_json.h"

namespace kiln::service {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

EntryView ViewOfMetadata(const cache::EntryMetadata& metadata) {
  const EntryNotes notes = ParseEntryNotes(metadata.options);
  return EntryView{
      .id = metadata.id,
      .plan = EntryPlanName(metadata),
      .options_json = notes.options.dump(),
      .entry_compile_ms = metadata.compile_seconds * 1000,
      .kernels = notes.kernels,
      .estimated_us = metadata.device_seconds * 1e6,
      .created_ms = metadata.created_ms,
      .executable = nullptr,
  };
}

std::optional<hlo::Hash128> ParseKeyHex(std::string_view text) {
  if (text.size() != 32) return std::nullopt;
  hlo::Hash128 key;
  for (size_t i = 0; i < 32; ++i) {
    const int digit = HexDigit(text[i]);
    if (digit < 0) return std::nullopt;
    uint64_t& half = i < 16 ? key.high : key.low;
    half = (half << 4) | static_cast<uint64_t>(digit);
  }
  return key;
}

}  // namespace kiln::service
