// Compressed input files: zstd and gzip, recognised by their magic numbers
// (not their names), decoded with a bound on the decoded size so a small
// file cannot expand without limit (a "zip bomb" is an error, not an OOM).
//
// Pure functions; thread-safe (zstd contexts are per thread, zlib streams
// per call).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::tools {

enum class Compression { kNone, kZstd, kGzip };

// By the first bytes: zstd frames start 28 B5 2F FD, gzip members 1F 8B.
Compression CompressionOf(std::string_view bytes);
std::string_view CompressionName(Compression compression);  // "zstd", "gzip", "none"

// The name without a compression suffix (".zst", ".zstd", ".gz").
std::string_view StripCompressionSuffix(std::string_view name);

// Decodes every frame (zstd) or member (gzip) of `bytes`. Fails with
// resource_exhausted once the output passes `max_bytes`, invalid_argument
// for corrupt or truncated data.
Result<std::string> Decompress(std::string_view bytes, Compression compression, size_t max_bytes);

}  // namespace kiln::tools
