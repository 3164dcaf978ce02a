// zstd content coding of request and response bodies.
//
// Decoding is bounded: a small compressed body cannot expand past the body
// limit. All functions are thread-safe (compression contexts are
// thread-local) and meant to run off the loop thread when bodies are large.
#pragma once

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>

#include "server/http/json_response.h"
#include "server/http/request.h"
#include "server/http/response.h"

namespace kiln::http {

// Decodes `request.body` in place according to its Content-Encoding (absent,
// "identity" or "zstd") and drops the field. Fails with 415 for other
// codings (repeated fields count as one list: two "zstd" fields are 415), 413 when the decoded body passes `max_body_bytes`, 400 for a
// corrupt or truncated zstd frame.
Status DecodeRequestBody(Request& request, size_t max_body_bytes);

// zstd-decompresses `compressed`, failing once the output passes `max_bytes`.
Result<std::string> ZstdDecompress(std::string_view compressed, size_t max_bytes);

// zstd-compresses `data` at `level` (1 = fastest).
std::string ZstdCompress(std::string_view data, int level);

struct CompressionPolicy {
  size_t min_bytes = 1024;  // smaller bodies are sent as they are
  int level = 1;
};

// The bytes that go on the wire for a response.
struct WireBody {
  Bytes bytes;        // may be null (empty body)
  bool zstd = false;  // true: Content-Encoding: zstd
};

// Chooses the wire body: the handler's precompressed `zstd_body` when the
// client accepts zstd; otherwise `body`, compressed here when the client
// accepts zstd, `compress_allowed`, the response is compressible and the body
// is at least `policy.min_bytes` and shrinks.
// Whether ChooseWireBody would compress (CPU work worth keeping off the loop).
bool WouldCompress(const Response& response, bool client_accepts_zstd, bool compress_allowed,
                   const CompressionPolicy& policy);

WireBody ChooseWireBody(const Response& response, bool client_accepts_zstd, bool compress_allowed,
                        const CompressionPolicy& policy);

}  // namespace kiln::http
