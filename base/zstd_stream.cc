#include "base/zstd_stream.h"

#include <algorithm>
#include <new>

#include "base/zstd_context.h"

namespace kiln {
namespace {

// The first output buffer: a few times the input (what compressed text and
// executables shrink to), at least one zstd block, never past the limit.
size_t InitialCapacity(std::string_view compressed, size_t limit) {
  const size_t guess = std::max<size_t>(ZSTD_DStreamOutSize(), compressed.size() * 8);
  return std::min(guess, limit);
}

}  // namespace

Result<std::string> ZstdDecompressBounded(std::string_view compressed, size_t max_bytes,
                                          const ZSTD_DDict* dictionary) {
  ZSTD_DCtx* ctx = ThreadZstdDecompressionContext();
  if (ctx == nullptr) {
    return ResourceExhaustedError("zstd: out of memory creating a decompression context")
        .WithReason(std::string(kOutOfMemory));
  }
  if (dictionary != nullptr) {
    if (size_t referenced = ZSTD_DCtx_refDDict(ctx, dictionary); ZSTD_isError(referenced)) {
      return DataLossError(std::string("zstd: cannot use the dictionary: ") + ZSTD_getErrorName(referenced));
    }
  }
  // One byte past the limit tells "exactly max_bytes" from "more".
  const size_t limit = max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1;
  std::string out;
  try {
    out.resize(InitialCapacity(compressed, limit));
    ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
    size_t produced = 0;
    while (true) {
      if (produced == out.size()) {
        if (out.size() >= limit) break;  // full at the limit: more would pass it
        out.resize(std::min(limit, std::max<size_t>(out.size() * 2, ZSTD_DStreamOutSize())));
      }
      ZSTD_outBuffer buffer{out.data(), out.size(), produced};
      const size_t result = ZSTD_decompressStream(ctx, &buffer, &in);
      if (ZSTD_isError(result)) return DataLossError(std::string("zstd: corrupt frame: ") + ZSTD_getErrorName(result));
      produced = buffer.pos;
      if (produced > max_bytes) break;
      const bool input_done = in.pos == in.size;
      if (result == 0 && input_done) {  // every frame complete
        out.resize(produced);
        return out;
      }
      if (input_done && buffer.pos < buffer.size) return DataLossError("zstd: the data ends inside a frame (truncated)");
    }
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("zstd: out of memory decompressing (" + std::to_string(out.size()) +
                                  " bytes held)")
        .WithReason(std::string(kOutOfMemory));
  }
  return ResourceExhaustedError("zstd: the data decodes to more than " + std::to_string(max_bytes) + " bytes");
}

}  // namespace kiln
