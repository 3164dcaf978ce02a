// The entries the crash test's writer stores: entry i has a fixed id and
// deterministic contents (first as compiled, then as tuned), so the test can
// check what it reads back.
// Header-only; pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "cache/entry.h"

namespace kiln::cache::testing {

inline EntryId CrashEntryId(uint64_t i) {
  return EntryId{"crash-tenant", Hash128{0xc0ffee0000000000ULL | i, i * 0x9e3779b97f4a7c15ULL}, "v5e", kCompilerFormatVersion};
}

// 1..48 KiB: a compressible header followed by pseudo-random bytes.
inline std::string CrashEntryBytes(uint64_t i) {
  uint64_t state = i * 0x2545f4914f6cdd1dULL + 1;
  const size_t size = 1024 + (i * 7919) % (47 * 1024);
  std::string bytes;
  bytes.reserve(size);
  while (bytes.size() < size / 2) bytes += "kiln-executable-section;";
  while (bytes.size() < size) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    bytes.push_back(static_cast<char>(state & 0xff));
  }
  return bytes;
}

// The tuned executable the writer swaps in over entry i after storing it.
inline std::string CrashEntryTunedBytes(uint64_t i) { return CrashEntryBytes(i + (uint64_t{1} << 40)); }

}  // namespace kiln::cache::testing
