// A keyed MAC on shared-tier values: who may write what every server
// trusts.
//
// The bundle checksums in a value (XXH3) catch damage, not intent: anyone
// who can write to Redis can write a well-formed value for any key. With a
// key shared by the fleet (`kiln serve --shared-key-file`), every published
// value carries HMAC-SHA256(key, bundle) and a fetched value is used only
// when its MAC verifies, so only servers holding the key can plant entries.
//
// Layout of a MAC'd value: "KILNMAC1" | 32-byte HMAC-SHA256 | bundle bytes.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::cache::shared {

// Keys shorter than this are refused (HMAC-SHA256 wants 32 bytes of key).
inline constexpr size_t kMinValueKeyBytes = 16;

// `bundle` with its MAC in front.
std::string SignValue(std::string_view key, std::string_view bundle);

// The bundle of a MAC'd value whose MAC verifies under `key`; DataLoss for
// a value without a MAC or with a wrong one.
Result<std::string_view> OpenSignedValue(std::string_view key, std::string_view value);

// Whether `value` starts as a MAC'd value does (a server without a key
// skips the MAC it cannot check).
bool IsSignedValue(std::string_view value);
std::string_view UnsignedPart(std::string_view value);

}  // namespace kiln::cache::shared
