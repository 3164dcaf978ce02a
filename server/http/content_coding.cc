#include "server/http/content_coding.h"

#include <zstd.h>

#include <algorithm>
#include <memory>

#include "base/str_cat.h"
#include "base/zstd_context.h"
#include "base/zstd_stream.h"

namespace kiln::http {

Result<std::string> ZstdDecompress(std::string_view compressed, size_t max_bytes) {
  Result<std::string> out = ZstdDecompressBounded(compressed, max_bytes);
  if (out) return out;
  const Error& error = out.error();
  if (error.reason() == kOutOfMemory) return UnavailableError("out of memory decoding the zstd request body").RetryAfter(1);
  if (error.code == ErrorCode::kResourceExhausted) {
    return std::unexpected(
        ResourceExhaustedError(StrCat("zstd request body decodes to more than the ", max_bytes, "-byte limit"))
            .WithReason("payload_too_large"));
  }
  return std::unexpected(
      InvalidArgumentError(StrCat("zstd request body is corrupt: ", error.message)).WithReason("bad_content_encoding"));
}

Status DecodeRequestBody(Request& request, size_t max_body_bytes) {
  // Repeated fields make one list ("zstd" twice is "zstd, zstd"), which is
  // refused whole rather than decoded once.
  std::string codings;
  for (const auto& [name, value] : request.headers.fields()) {
    if (EqualsIgnoreCase(name, "Content-Encoding")) codings += (codings.empty() ? "" : ", ") + value;
  }
  const std::string_view coding = codings;
  if (coding.empty() || EqualsIgnoreCase(coding, "identity")) return {};
  if (!EqualsIgnoreCase(coding, "zstd")) {
    return std::unexpected(
        UnimplementedError(StrCat("Content-Encoding \"", coding, "\" is not supported; use zstd or none"))
            .WithReason("unsupported_content_encoding"));
  }
  auto decoded = ZstdDecompress(request.body, max_body_bytes);
  if (!decoded) return std::unexpected(decoded.error());
  request.body = std::move(*decoded);
  request.headers.Remove("Content-Encoding");
  return {};
}

std::string ZstdCompress(std::string_view data, int level) {
  ZSTD_CCtx* ctx = ThreadZstdCompressionContext();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t written = ZSTD_compress2(ctx, out.data(), out.size(), data.data(), data.size());
  if (ZSTD_isError(written)) return {};  // only on allocation failure
  out.resize(written);
  return out;
}

bool WouldCompress(const Response& response, bool client_accepts_zstd, bool compress_allowed,
                   const CompressionPolicy& policy) {
  return client_accepts_zstd && !response.zstd_body && compress_allowed && response.compressible &&
         response.body_size() >= policy.min_bytes && !response.headers.Has("Content-Encoding");
}

WireBody ChooseWireBody(const Response& response, bool client_accepts_zstd, bool compress_allowed,
                        const CompressionPolicy& policy) {
  if (client_accepts_zstd && response.zstd_body) return {response.zstd_body, true};
  if (!WouldCompress(response, client_accepts_zstd, compress_allowed, policy)) {
    return {response.body, false};
  }
  std::string compressed = ZstdCompress(response.body_view(), policy.level);
  if (compressed.empty() || compressed.size() >= response.body_size()) {
    return {response.body, false};
  }
  return {MakeBytes(std::move(compressed)), true};
}

}  // namespace kiln::http
