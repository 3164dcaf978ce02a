#include "tools/compressed_text.h"

#include <zlib.h>

#include <algorithm>

#include "base/str_cat.h"
#include "base/zstd_stream.h"

namespace kiln::tools {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

Result<std::string> Gunzip(std::string_view bytes, size_t max_bytes) {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip wrapper, not zlib's.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return ResourceExhaustedError("gzip: cannot allocate a stream");
  std::string out(std::min<size_t>(std::max<size_t>(bytes.size() * 4, 1 << 16), max_bytes + 1), '\0');
  size_t produced = 0;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  Status status = Ok();
  while (true) {
    if (produced == out.size()) {
      if (out.size() > max_bytes) {
        status = ResourceExhaustedError(StrCat("gzip data decodes to more than ", max_bytes, " bytes"));
        break;
      }
      out.resize(std::min(out.size() * 2, max_bytes + 1));
    }
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    stream.avail_out = static_cast<uInt>(out.size() - produced);
    const int result = inflate(&stream, Z_NO_FLUSH);
    produced = out.size() - stream.avail_out;
    if (produced > max_bytes) {
      status = ResourceExhaustedError(StrCat("gzip data decodes to more than ", max_bytes, " bytes"));
      break;
    }
    if (result == Z_STREAM_END) {
      // Concatenated members (gzip -c a b > c.gz) decode one after another.
      if (stream.avail_in == 0 || static_cast<unsigned char>(*stream.next_in) != 0x1f) break;
      inflateReset(&stream);
      continue;
    }
    if (result == Z_BUF_ERROR && stream.avail_in == 0) {
      status = InvalidArgumentError("gzip data ends inside a member (truncated)");
      break;
    }
    if (result != Z_OK && result != Z_BUF_ERROR) {
      status = InvalidArgumentError(StrCat("gzip data is corrupt: ", stream.msg != nullptr ? stream.msg : "inflate failed"));
      break;
    }
  }
  inflateEnd(&stream);
  if (!status) return std::unexpected(status.error());
  out.resize(produced);
  return out;
}

}  // namespace

Compression CompressionOf(std::string_view bytes) {
  if (StartsWith(bytes, "\x28\xb5\x2f\xfd")) return Compression::kZstd;
  if (StartsWith(bytes, "\x1f\x8b")) return Compression::kGzip;
  return Compression::kNone;
}

std::string_view CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kZstd: return "zstd";
    case Compression::kGzip: return "gzip";
    case Compression::kNone: break;
  }
  return "none";
}

std::string_view StripCompressionSuffix(std::string_view name) {
  for (std::string_view suffix : {".zst", ".zstd", ".gz"}) {
    if (EndsWith(name, suffix)) return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

Result<std::string> Decompress(std::string_view bytes, Compression compression, size_t max_bytes) {
  switch (compression) {
    case Compression::kNone: return std::string(bytes);
    case Compression::kGzip: return Gunzip(bytes, max_bytes);
    case Compression::kZstd: {
      Result<std::string> out = ZstdDecompressBounded(bytes, max_bytes);
      if (out) return out;
      if (out.error().reason() == kOutOfMemory) return std::unexpected(out.error());
      if (out.error().code == ErrorCode::kResourceExhausted)
        return ResourceExhaustedError(StrCat("zstd data decodes to more than ", max_bytes, " bytes"));
      return InvalidArgumentError("zstd data is corrupt or truncated");
    }
  }
  return InternalError("unknown compression");
}

}  // namespace kiln::tools
