// zstd compression of executables, with an optional trained dictionary.
//
// Compress/Decompress use per-thread zstd contexts, so they are thread-safe
// and allocation-light. A ZstdDictionary is immutable after creation and may
// be shared by any number of threads. Decompress never trusts its input: a
// truncated or corrupt frame, a wrong dictionary or a size other than
// `expected_size` is an error, never a crash or an unbounded allocation.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/format/program.h"

namespace kiln::cache {

// Chosen with kiln_cache_bench over the corpus .hlo files (766 files,
// 26.3 MB; stand-ins for executables until `kiln compile` writes them).
// Speeds are MB/s on one core of the shared build machine, unloaded run /
// loaded run; "dict" is the held-out 20% with a dictionary trained on the
// other 80%:
//   level  ratio  compress   decompress  held-out plain -> dict
//       1  10.62  449 / 176  1198 / 505   8.80 -> 9.44 (+6.8%)
//       3   9.25  366 / 159  1177 / 651   8.79 -> 9.44 (+6.9%)
//       6  11.30  103 /  47  1223 / 598  10.47 -> 11.69 (+10.4%)
//       9  13.52   63 /  24  1867 / 756  11.25 -> 13.11 (+14.2%)
//      15  14.09   10 /   3  1286 / 1510 11.73 -> 14.20 (+17.4%)
//      19  15.18  0.6 / 1.5   862 / 1359 12.13 -> 14.26 (+15.0%)
// An executable is compressed once, after its compile, and decompressed on
// every disk hit; decompression speed does not fall with the level. Level 6
// stores 22% less than level 3 while compressing ~10 ms per MB (small beside
// a compile); level 9 and above cost 2-30x more time for the rest.
inline constexpr int kDefaultZstdLevel = 6;

class ZstdDictionary {
 public:
  // Digests `bytes` (a zstd dictionary, e.g. from TrainZstdDictionary) for
  // compression at `level` and for decompression. Fails on bytes that are
  // not a zstd dictionary.
  static Result<std::shared_ptr<const ZstdDictionary>> Create(std::string_view bytes, int level);
  ~ZstdDictionary();

  ZstdDictionary(const ZstdDictionary&) = delete;
  ZstdDictionary& operator=(const ZstdDictionary&) = delete;

  uint32_t id() const { return id_; }  // the id zstd writes into each frame
  const std::string& bytes() const { return bytes_; }
  const ZSTD_CDict* cdict() const { return cdict_; }
  const ZSTD_DDict* ddict() const { return ddict_; }

 private:
  ZstdDictionary() = default;
  std::string bytes_;
  uint32_t id_ = 0;
  ZSTD_CDict* cdict_ = nullptr;
  ZSTD_DDict* ddict_ = nullptr;
};

// Frames claiming more than this are refused before anything is
// allocated (a corrupt or hostile size field must not turn into a huge
// allocation): the runtime's limit on executables, which the compiler
// applies too, so no stored program is larger.
inline constexpr uint64_t kMaxExecutableBytes = runtime::kMaxExecutableBytes;

// Compresses `raw` at `level` (with `dictionary` when non-null).
Result<std::string> ZstdCompress(std::string_view raw, int level, const ZstdDictionary* dictionary);

// Decompresses one frame whose content is exactly `expected_size` bytes
// (at most kMaxExecutableBytes). Memory follows what the frame really
// decodes to (base/zstd_stream.h), never `expected_size` alone. Errors:
// kDataLoss for a frame that is corrupt or holds another size;
// kResourceExhausted for a size over the limit, or (reason kOutOfMemory)
// when memory ran out.
Result<std::string> ZstdDecompress(std::string_view frame, uint64_t expected_size,
                                   const ZstdDictionary* dictionary);

// The dictionary id a frame was written with (0: none), or an error when
// `frame` is not a zstd frame.
Result<uint32_t> ZstdFrameDictionaryId(std::string_view frame);

// Trains a dictionary of at most `max_bytes` on `samples` (ZDICT). Fails
// when there are too few or too uniform samples to train on.
Result<std::string> TrainZstdDictionary(const std::vector<std::string>& samples, size_t max_bytes);

}  // namespace kiln::cache
