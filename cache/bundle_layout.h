// Internal to cache/: the bundle layout's constants (bundle.h documents the
// layout), shared by its writer (bundle.cc) and reader (bundle_reader.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "cache/checksum.h"

namespace kiln::cache::bundle_layout {

inline constexpr std::string_view kMagic = "KILNBNDL";
// magic | u32 bundle format | u32 compiler format | u32 schema version
inline constexpr size_t kHeaderBytes = 8 + 3 * 4;

enum ItemKind : uint8_t { kEntryItem = 1, kRecordItem = 2, kManifestItem = 3 };
// u8 kind | u64 payload length
inline constexpr size_t kItemHeadBytes = 1 + 8;

inline uint64_t ItemChecksum(std::string_view payload) { return ExecutableChecksum(payload); }

}  // namespace kiln::cache::bundle_layout
