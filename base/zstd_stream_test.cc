#include "base/zstd_stream.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <string>

#include "base/zstd_testing.h"

namespace kiln {
namespace {

std::string Text(size_t size) {
  std::string text;
  for (size_t i = 0; text.size() < size; ++i) text += "kernel " + std::to_string(i * 7919 % 1000) + ";";
  text.resize(size);
  return text;
}

TEST(ZstdStreamTest, DecodesEveryFrameUpToTheLimitAndNoFurther) {
  const std::string a = Text(300'000), b = Text(1000);
  const std::string both = testing::StreamedZstdFrame(a) + testing::StreamedZstdFrame(b);
  auto whole = ZstdDecompressBounded(both, a.size() + b.size());
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(*whole, a + b);
  auto over = ZstdDecompressBounded(both, a.size() + b.size() - 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
}

// A frame's claim costs nothing: memory follows what it decodes to. A
// 1 KB frame allowed a gigabyte holds a buffer of about a block, where
// allocating what the caller allows up front would hold the gigabyte.
TEST(ZstdStreamTest, MemoryFollowsTheDataNotTheLimit) {
  const std::string raw = Text(1000);
  auto out = ZstdDecompressBounded(testing::StreamedZstdFrame(raw), size_t{1} << 30);
  ASSERT_TRUE(out) << out.error().ToString();
  EXPECT_EQ(*out, raw);
  EXPECT_LE(out->capacity(), size_t{1} << 20);
}

TEST(ZstdStreamTest, CorruptAndTruncatedFramesAreDataLoss) {
  const std::string frame = testing::StreamedZstdFrame(Text(200'000));
  auto truncated = ZstdDecompressBounded(frame.substr(0, frame.size() / 2), 1 << 20);
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos) << truncated.error().message;
  auto garbage = ZstdDecompressBounded("not a zstd frame at all", 1 << 20);
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace kiln
