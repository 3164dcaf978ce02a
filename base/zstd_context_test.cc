#include "base/zstd_context.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace kiln {
namespace {

// With the context's settings as handed out, or at `level`.
std::string Compress(const std::string& raw, int level = 0) {
  ZSTD_CCtx* context = ThreadZstdCompressionContext();
  EXPECT_NE(context, nullptr);
  if (level != 0) ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level);
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  size_t size = ZSTD_compress2(context, frame.data(), frame.size(), raw.data(), raw.size());
  EXPECT_FALSE(ZSTD_isError(size));
  frame.resize(size);
  return frame;
}

std::string Decompress(const std::string& frame, size_t size) {
  ZSTD_DCtx* context = ThreadZstdDecompressionContext();
  EXPECT_NE(context, nullptr);
  std::string raw(size, '\0');
  size_t got = ZSTD_decompressDCtx(context, raw.data(), raw.size(), frame.data(), frame.size());
  EXPECT_FALSE(ZSTD_isError(got));
  raw.resize(got);
  return raw;
}

TEST(ZstdContextTest, OneContextPerThreadReusedAcrossCalls) {
  EXPECT_EQ(ThreadZstdCompressionContext(), ThreadZstdCompressionContext());
  EXPECT_EQ(ThreadZstdDecompressionContext(), ThreadZstdDecompressionContext());
  ZSTD_CCtx* other = nullptr;
  std::thread([&] { other = ThreadZstdCompressionContext(); }).join();
  EXPECT_NE(other, ThreadZstdCompressionContext());
}

TEST(ZstdContextTest, NoSettingCarriesOverToTheNextUser) {
  std::string raw;
  for (int i = 0; i < 4000; ++i) raw += "kiln " + std::to_string(i % 97) + " ";
  std::string fresh;  // a new thread's context, never set
  std::thread([&] { fresh = Compress(raw); }).join();
  const std::string at_nineteen = Compress(raw, 19);  // leaves level 19 set
  ASSERT_NE(at_nineteen, fresh);
  EXPECT_EQ(Compress(raw), fresh) << "the level was reset";
  EXPECT_EQ(Decompress(fresh, raw.size()), raw);
  EXPECT_EQ(Decompress(at_nineteen, raw.size()), raw);
}

}  // namespace
}  // namespace kiln
