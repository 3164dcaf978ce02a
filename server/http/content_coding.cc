#include "server/http/content_coding.h"

#include <zstd.h>

#include <algorithm>
#include <memory>

#include "base/str_cat.h"
#include "base/zstd_context.h"

namespace kiln::http {

Result<std::string> ZstdDecompress(std::string_view compressed, size_t max_bytes) {
  ZSTD_DCtx* ctx = ThreadZstdDecompressionContext();
  std::string out;
  // Trust the frame's declared size only as a hint, capped by the limit.
  unsigned long long declared = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  size_t initial = ZSTD_DStreamOutSize();
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR) {
    initial = std::max<size_t>(initial, std::min<unsigned long long>(declared, max_bytes + 1));
  }
  out.resize(std::min(initial, max_bytes + 1));
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  size_t produced = 0;
  while (true) {
    if (produced == out.size()) out.resize(std::min(out.size() * 2, max_bytes + 1));
    ZSTD_outBuffer buffer{out.data(), out.size(), produced};
    size_t result = ZSTD_decompressStream(ctx, &buffer, &in);
    if (ZSTD_isError(result)) {
      return std::unexpected(InvalidArgumentError(StrCat("zstd request body is corrupt: ", ZSTD_getErrorName(result)))
                                 .WithReason("bad_content_encoding"));
    }
    produced = buffer.pos;
    if (produced > max_bytes) {
      return std::unexpected(
          ResourceExhaustedError(StrCat("zstd request body decodes to more than the ", max_bytes, "-byte limit"))
              .WithReason("payload_too_large"));
    }
    bool input_done = in.pos == in.size;
    if (result == 0 && input_done) break;  // every frame complete
    if (input_done && buffer.pos < buffer.size) {
      return std::unexpected(
          InvalidArgumentError("zstd request body ends inside a frame (truncated)").WithReason("bad_content_encoding"));
    }
  }
  out.resize(produced);
  return out;
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
