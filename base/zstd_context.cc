#include "base/zstd_context.h"

#include <memory>

namespace kiln {
namespace {

struct CompressionContextDeleter {
  void operator()(ZSTD_CCtx* context) const { ZSTD_freeCCtx(context); }
};
struct DecompressionContextDeleter {
  void operator()(ZSTD_DCtx* context) const { ZSTD_freeDCtx(context); }
};

}  // namespace

ZSTD_CCtx* ThreadZstdCompressionContext() {
  thread_local std::unique_ptr<ZSTD_CCtx, CompressionContextDeleter> context(ZSTD_createCCtx());
  if (context != nullptr) ZSTD_CCtx_reset(context.get(), ZSTD_reset_session_and_parameters);
  return context.get();
}

ZSTD_DCtx* ThreadZstdDecompressionContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, DecompressionContextDeleter> context(ZSTD_createDCtx());
  if (context != nullptr) ZSTD_DCtx_reset(context.get(), ZSTD_reset_session_and_parameters);
  return context.get();
}

}  // namespace kiln
