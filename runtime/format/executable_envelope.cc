#include "runtime/format/executable_envelope.h"

#include <xxhash.h>

#include <cstring>
#include <string>

namespace kiln::runtime {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'E', 'X', 'E', '\0'};

void PutU32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
void PutU64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t GetU32(const uint8_t* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{in[i]} << (8 * i);
  return v;
}
uint64_t GetU64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{in[i]} << (8 * i);
  return v;
}

}  // namespace

// Layout: magic[8] | version u32 | reserved u32 | payload length u64 |
// XXH3-64(payload) u64, all little-endian.
std::vector<uint8_t> WrapInEnvelope(uint32_t format_version, std::span<const uint8_t> payload) {
  std::vector<uint8_t> out(kEnvelopeHeaderBytes + payload.size());
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  PutU32(out.data() + 8, format_version);
  PutU32(out.data() + 12, 0);
  PutU64(out.data() + 16, payload.size());
  PutU64(out.data() + 24, XXH3_64bits(payload.data(), payload.size()));
  if (!payload.empty()) std::memcpy(out.data() + kEnvelopeHeaderBytes, payload.data(), payload.size());
  return out;
}

Result<EnvelopeContents> OpenEnvelope(std::span<const uint8_t> bytes) {
  if (bytes.size() < kEnvelopeHeaderBytes) {
    return DataLossError("executable truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
                         std::to_string(kEnvelopeHeaderBytes) + "-byte header");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return InvalidArgumentError("not a kiln executable: bad magic");
  }
  if (GetU32(bytes.data() + 12) != 0) return DataLossError("executable header is corrupt: reserved bytes set");
  uint64_t length = GetU64(bytes.data() + 16);
  uint64_t present = bytes.size() - kEnvelopeHeaderBytes;
  if (length != present) {
    return DataLossError("executable " + std::string(length > present ? "truncated" : "has trailing bytes") +
                         ": header says " + std::to_string(length) + " payload bytes, " + std::to_string(present) +
                         " present");
  }
  std::span<const uint8_t> payload = bytes.subspan(kEnvelopeHeaderBytes);
  if (XXH3_64bits(payload.data(), payload.size()) != GetU64(bytes.data() + 24)) {
    return DataLossError("executable checksum mismatch: the bytes are corrupt");
  }
  return EnvelopeContents{GetU32(bytes.data() + 8), payload};
}

}  // namespace kiln::runtime
