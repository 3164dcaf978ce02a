// Byte sizes and durations as people type them on a command line or in an
// environment variable, and as kiln prints them back.
//
// Errors name the text and say what is accepted. Pure functions;
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/ascii.h"
#include "base/status.h"

namespace kiln {

// Decimal digits only, at most `max`; the error names `what`.
Result<uint64_t> ParseUnsigned(std::string_view text, uint64_t max, std::string_view what);

// "256MiB" -> 268435456. Suffixes: k/K/KB (1000), KiB (1024), M/MB, MiB, G/GB,
// GiB, T/TB, TiB; case-insensitive; no suffix or "B" is bytes.
Result<uint64_t> ParseByteSize(std::string_view text);

// "60s", "1.5s", "500ms", "2m", "1h"; bare digits are seconds. Positive and
// at most 24 hours; rounded to whole milliseconds (at least 1).
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// "20.0 GiB", "512.0 MiB", "12 bytes".
std::string DescribeBytes(uint64_t bytes);

// "5 s", "1.5 s", "250 ms".
std::string DescribeDuration(std::chrono::milliseconds duration);

}  // namespace kiln
