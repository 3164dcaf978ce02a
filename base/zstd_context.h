// The calling thread's zstd compression and decompression contexts, made on
// a thread's first use and reused after, so compressing and decompressing
// allocate no context per call (the cache codec and the HTTP content coding
// share them).
//
// Each call hands the context back reset, session and parameters, so no
// setting of a previous user (a level, a dictionary) carries over. The
// context belongs to the thread: do not free it, keep it past the call that
// uses it or hand it to another thread. nullptr when zstd could not
// allocate it (out of memory). Thread-safe (one context per thread).
#pragma once

#include <zstd.h>

namespace kiln {

ZSTD_CCtx* ThreadZstdCompressionContext();
ZSTD_DCtx* ThreadZstdDecompressionContext();

}  // namespace kiln
