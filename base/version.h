// Versions several folders need to agree on. Bump each only as its comment
// says; each is stored or sent where a mismatch must be noticed.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln {

// kiln's release, as `kiln serve` reports it (/healthz, /v1/stats).
inline constexpr std::string_view kKilnVersion = "0.1.0";

// The compiler's output format. Part of every fingerprint key and of every
// cache entry's identity (cache/entry.h): bump when the compiler's output
// for the same input may change, so that entries of an older compiler are
// never served.
inline constexpr uint32_t kCompilerFormatVersion = 24;

}  // namespace kiln
