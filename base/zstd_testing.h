// Test helper: a zstd frame that does not record its content size, as a
// streaming writer makes them, so only decoding tells how much it holds.
// Header-only; for tests.
#pragma once

#include <zstd.h>

#include <string>

namespace kiln::testing {

inline std::string StreamedZstdFrame(const std::string& raw) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_contentSizeFlag, 0);
  std::string frame(ZSTD_compressBound(raw.size()) + 64, '\0');
  ZSTD_inBuffer in{raw.data(), raw.size(), 0};
  ZSTD_outBuffer out{frame.data(), frame.size(), 0};
  while (ZSTD_compressStream2(ctx, &out, &in, ZSTD_e_end) != 0) {
  }
  ZSTD_freeCCtx(ctx);
  frame.resize(out.pos);
  return frame;
}

}  // namespace kiln::testing
