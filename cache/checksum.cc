#include "cache/checksum.h"

#include <xxhash.h>

namespace kiln::cache {

uint64_t ExecutableChecksum(std::string_view raw_executable) {
  return XXH3_64bits(raw_executable.data(), raw_executable.size());
}

}  // namespace kiln::cache
