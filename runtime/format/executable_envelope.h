// The envelope around an executable's FlatBuffer: a fixed 32-byte header
// (magic "KILNEXE\0", format version, payload length, XXH3-64 of the
// payload) so truncated, corrupted or foreign bytes are rejected with a
// clear error before any field is read. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace kiln::runtime {

inline constexpr size_t kEnvelopeHeaderBytes = 32;

// Header followed by `payload`.
std::vector<uint8_t> WrapInEnvelope(uint32_t format_version, std::span<const uint8_t> payload);

struct EnvelopeContents {
  uint32_t format_version;
  std::span<const uint8_t> payload;  // points into the input bytes
};

// Checks magic, length and checksum; the version is returned, not judged.
Result<EnvelopeContents> OpenEnvelope(std::span<const uint8_t> bytes);

}  // namespace kiln::runtime
