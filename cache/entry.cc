#include "cache/entry.h"

#include <xxhash.h>

namespace kiln::cache {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

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
