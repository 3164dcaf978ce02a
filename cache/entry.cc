#include "cache/entry.h"

#include <xxhash.h>

#include <cmath>
#include <cstdio>

namespace kiln::cache {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// At most 64 bytes of `text`, with anything unprintable escaped.
std::string Quoted(std::string_view text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < 64; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  out += text.size() > 64 ? "'... (" + std::to_string(text.size()) + " bytes)" : "'";
  return out;
}

constexpr int64_t kYear2000Ms = 946'684'800'000;
constexpr int64_t kDayMs = 86'400'000;

}  // namespace

Status ValidateName(std::string_view field, std::string_view name) {
  bool valid = !name.empty() && name.size() <= 128;
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.');
  }
  if (valid) return Ok();
  return InvalidArgumentError(std::string(field) + " " + Quoted(name) +
                              " is not a name: 1 to 128 letters, digits, '-', '_' or '.'")
      .WithReason("invalid_name");
}

Status ValidateSeconds(std::string_view field, double seconds) {
  if (std::isfinite(seconds) && seconds >= 0 && seconds <= kMaxRecordedSeconds) return Ok();
  char text[64];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return InvalidArgumentError(std::string(field) + " of " + text + " s is not a duration between 0 and a year");
}

Status ValidateUnixMs(std::string_view field, int64_t unix_ms, int64_t now_ms) {
  if (unix_ms >= kYear2000Ms && unix_ms <= now_ms + kDayMs) return Ok();
  return InvalidArgumentError(std::string(field) + " " + std::to_string(unix_ms) +
                              " (Unix ms) is not a time between 2000-01-01 and tomorrow");
}

Result<Hash128> ParseHash128(std::string_view hex) {
  if (hex.size() != 32) {
    return InvalidArgumentError("hash \"" + std::string(hex) + "\": expected 32 hex digits, got " +
                                std::to_string(hex.size()) + " characters");
  }
  Hash128 hash;
  for (size_t i = 0; i < 32; ++i) {
    int digit = HexDigit(hex[i]);
    if (digit < 0) {
      return InvalidArgumentError("hash \"" + std::string(hex) + "\": '" + hex[i] + "' at " + std::to_string(i) +
                                  " is not a hex digit");
    }
    uint64_t& half = i < 16 ? hash.high : hash.low;
    half = (half << 4) | static_cast<uint64_t>(digit);
  }
  return hash;
}

std::string EntryId::ToString() const {
  return tenant + "/" + key.Hex() + "/" + chip + "/v" + std::to_string(format_version);
}

size_t EntryIdHash::operator()(const EntryId& id) const {
  uint64_t h = id.key.low ^ (id.key.high * 0x9e3779b97f4a7c15ULL);
  h ^= XXH3_64bits(id.tenant.data(), id.tenant.size()) * 31;
  h ^= XXH3_64bits(id.chip.data(), id.chip.size()) * 131;
  h ^= id.format_version;
  return static_cast<size_t>(h);
}

}  // namespace kiln::cache
