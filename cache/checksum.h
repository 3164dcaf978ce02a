// The integrity checksum of an executable: XXH3-64 of its raw (uncompressed)
// bytes. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::cache {

uint64_t ExecutableChecksum(std::string_view raw_executable);

}  // namespace kiln::cache
