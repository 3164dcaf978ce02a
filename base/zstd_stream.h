// Bounded zstd decompression: output grows as it is decoded, so a frame
// that claims (or truly holds) more than the caller allows costs at most
// about twice what it really decodes to, capped by the caller's limit,
// never what its header says.
//
// Frames written by kiln and by clients alike pass through here: store
// blobs, bundles, shared-tier values and request bodies. Out of memory is
// an error, never an exception. Thread-safe (the calling thread's context,
// zstd_context.h).
#pragma once

#include <zstd.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln {

// The reason of an error that only says memory ran out: nothing is wrong
// with the data (a store must not quarantine an entry for it).
inline constexpr std::string_view kOutOfMemory = "out_of_memory";

// Every frame of `compressed`, concatenated, with `dictionary` when
// non-null. Errors: kResourceExhausted when the output would pass
// `max_bytes` (nothing past max_bytes + 1 is ever allocated) or memory ran
// out (reason kOutOfMemory); kDataLoss for a corrupt or truncated frame (the message says which
// and zstd's reason).
Result<std::string> ZstdDecompressBounded(std::string_view compressed, size_t max_bytes,
                                          const ZSTD_DDict* dictionary = nullptr);

}  // namespace kiln
