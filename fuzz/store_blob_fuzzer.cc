// libFuzzer harness: a stored executable's blob as the cache store decodes
// it on a disk hit (cache_store.cc DecodeRow: zstd with or without the
// store's dictionary, to exactly the recorded size, then the checksum)
// and as its reader then opens it (envelope, FlatBuffer, VerifyProgram).
//
// Input: a flags byte (bit 0: decode with the dictionary; bit 1: take the
// recorded size from the frame header, as an intact row would have it),
// four bytes of recorded size (little-endian: a damaged row may say
// anything up to kMaxExecutableBytes), then the zstd frame.
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "cache/checksum.h"
#include "cache/zstd_codec.h"
#include "fuzz/fuzz_dictionary.h"
#include "runtime/format/program.h"

namespace {

constexpr size_t kHeaderBytes = 5;

const kiln::cache::ZstdDictionary* Dictionary() {
  static const std::shared_ptr<const kiln::cache::ZstdDictionary> dictionary =
      kiln::fuzz::TrainedFuzzDictionary();
  return dictionary.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  if (size < kHeaderBytes) return 0;
  const uint8_t flags = data[0];
  uint64_t recorded = data[1] | (uint64_t{data[2]} << 8) | (uint64_t{data[3]} << 16) | (uint64_t{data[4]} << 24);
  std::string_view frame(reinterpret_cast<const char*>(data + kHeaderBytes), size - kHeaderBytes);
  if (flags & 2) {
    unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (declared <= cache::kMaxExecutableBytes) recorded = declared;
  }
  (void)cache::ZstdFrameDictionaryId(frame);
  auto raw = cache::ZstdDecompress(frame, recorded, (flags & 1) ? Dictionary() : nullptr);
  if (!raw) return 0;
  (void)cache::ExecutableChecksum(*raw);
  (void)runtime::ParseProgram(
      std::span(reinterpret_cast<const uint8_t*>(raw->data()), raw->size()));
  return 0;
}
