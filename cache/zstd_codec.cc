#include "cache/zstd_codec.h"

#include <zdict.h>

#include "base/zstd_context.h"
#include "base/zstd_stream.h"

namespace kiln::cache {
namespace {

// A failed zstd call: `code` says which kind, zstd's own code why.
Error ZstdError(ErrorCode code, std::string_view what, size_t zstd_code) {
  return Error::Coded(code, "zstd: " + std::string(what) + ": " + ZSTD_getErrorName(zstd_code));
}

}  // namespace

Result<std::shared_ptr<const ZstdDictionary>> ZstdDictionary::Create(std::string_view bytes, int level) {
  uint32_t id = ZDICT_getDictID(bytes.data(), bytes.size());
  if (id == 0) return InvalidArgumentError("zstd: not a zstd dictionary (" + std::to_string(bytes.size()) + " bytes)");
  std::shared_ptr<ZstdDictionary> dictionary(new ZstdDictionary());
  dictionary->bytes_.assign(bytes);
  dictionary->id_ = id;
  dictionary->cdict_ = ZSTD_createCDict(dictionary->bytes_.data(), dictionary->bytes_.size(), level);
  dictionary->ddict_ = ZSTD_createDDict(dictionary->bytes_.data(), dictionary->bytes_.size());
  if (dictionary->cdict_ == nullptr || dictionary->ddict_ == nullptr) {
    return InvalidArgumentError("zstd: could not digest dictionary " + std::to_string(id));
  }
  return dictionary;
}

ZstdDictionary::~ZstdDictionary() {
  ZSTD_freeCDict(cdict_);
  ZSTD_freeDDict(ddict_);
}

Result<std::string> ZstdCompress(std::string_view raw, int level, const ZstdDictionary* dictionary) {
  ZSTD_CCtx* cctx = ThreadZstdCompressionContext();
  if (cctx == nullptr) return ResourceExhaustedError("zstd: out of memory creating a compression context");
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  size_t size = dictionary != nullptr
                    ? ZSTD_compress_usingCDict(cctx, frame.data(), frame.size(), raw.data(), raw.size(),
                                               dictionary->cdict())
                    : ZSTD_compressCCtx(cctx, frame.data(), frame.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(size)) return ZstdError(ErrorCode::kInternal, "compress", size);
  frame.resize(size);
  return frame;
}

Result<std::string> ZstdDecompress(std::string_view frame, uint64_t expected_size,
                                   const ZstdDictionary* dictionary) {
  if (expected_size > kMaxExecutableBytes) {
    return ResourceExhaustedError("zstd: declared size " + std::to_string(expected_size) + " exceeds the limit");
  }
  // A frame decodes to at most one full block per 4 of its bytes (an RLE
  // block: a 3-byte header and the byte it repeats), so a larger recorded
  // size is corrupt and is refused before that much is allocated.
  constexpr uint64_t kMaxBytesPerFrameByte = ZSTD_BLOCKSIZE_MAX / 4;
  if (expected_size / kMaxBytesPerFrameByte > frame.size()) {
    return DataLossError("zstd: a " + std::to_string(frame.size()) + "-byte frame cannot hold " +
                     std::to_string(expected_size) + " bytes");
  }
  unsigned long long content_size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content_size == ZSTD_CONTENTSIZE_ERROR) return DataLossError("zstd: not a zstd frame");
  if (content_size != ZSTD_CONTENTSIZE_UNKNOWN && content_size != expected_size) {
    return DataLossError("zstd: frame holds " + std::to_string(content_size) + " bytes, expected " +
                         std::to_string(expected_size));
  }
  Result<std::string> raw =
      ZstdDecompressBounded(frame, expected_size, dictionary != nullptr ? dictionary->ddict() : nullptr);
  if (!raw) {
    if (raw.error().reason() == kOutOfMemory) return raw;
    if (raw.error().code == ErrorCode::kResourceExhausted) {
      return DataLossError("zstd: frame decodes to more than the " + std::to_string(expected_size) +
                           " bytes recorded");
    }
    return DataLossError(raw.error().message);
  }
  if (raw->size() != expected_size) {
    return DataLossError("zstd: frame decompressed to " + std::to_string(raw->size()) + " bytes, expected " +
                         std::to_string(expected_size));
  }
  return raw;
}

Result<uint32_t> ZstdFrameDictionaryId(std::string_view frame) {
  if (ZSTD_getFrameContentSize(frame.data(), frame.size()) == ZSTD_CONTENTSIZE_ERROR) {
    return DataLossError("zstd: not a zstd frame");
  }
  return ZSTD_getDictID_fromFrame(frame.data(), frame.size());
}

Result<std::string> TrainZstdDictionary(const std::vector<std::string>& samples, size_t max_bytes) {
  std::string joined;
  std::vector<size_t> sizes;
  sizes.reserve(samples.size());
  for (const std::string& sample : samples) {
    joined += sample;
    sizes.push_back(sample.size());
  }
  std::string dictionary(max_bytes, '\0');
  size_t size = ZDICT_trainFromBuffer(dictionary.data(), dictionary.size(), joined.data(), sizes.data(),
                                      static_cast<unsigned>(sizes.size()));
  if (ZDICT_isError(size)) {
    return FailedPreconditionError("zstd: dictionary training on " + std::to_string(samples.size()) +
                                   " samples failed: " + ZDICT_getErrorName(size));
  }
  dictionary.resize(size);
  return dictionary;
}

}  // namespace kiln::cache
