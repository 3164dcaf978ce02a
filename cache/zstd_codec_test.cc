#include "cache/zstd_codec.h"

#include <gtest/gtest.h>

#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TestExecutable;

TEST(ZstdCodecTest, RoundTripsAndCompresses) {
  const std::string raw = TestExecutable(1, 64 * 1024);
  for (int level : {1, 3, 9, 19}) {
    auto frame = ZstdCompress(raw, level, nullptr);
    ASSERT_TRUE(frame) << frame.error().message;
    EXPECT_LT(frame->size(), raw.size());
    auto back = ZstdDecompress(*frame, raw.size(), nullptr);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, raw);
  }
  auto empty = ZstdCompress("", 3, nullptr);
  ASSERT_TRUE(empty);
  auto back = ZstdDecompress(*empty, 0, nullptr);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->empty());
}

TEST(ZstdCodecTest, RejectsCorruptTruncatedAndMissizedFrames) {
  const std::string raw = TestExecutable(2, 16 * 1024);
  auto frame = ZstdCompress(raw, 3, nullptr);
  ASSERT_TRUE(frame);
  EXPECT_FALSE(ZstdDecompress(frame->substr(0, frame->size() / 2), raw.size(), nullptr));
  EXPECT_FALSE(ZstdDecompress(*frame, raw.size() + 1, nullptr));
  EXPECT_FALSE(ZstdDecompress("definitely not zstd", 19, nullptr));
  EXPECT_FALSE(ZstdDecompress(*frame, kMaxExecutableBytes + 1, nullptr));
  std::string flipped = *frame;
  flipped[flipped.size() / 2] ^= 0x5a;
  auto result = ZstdDecompress(flipped, raw.size(), nullptr);
  // zstd checks block structure; content damage may decode to other bytes,
  // which the store's checksum catches. Either way no crash.
  if (result) {
    EXPECT_NE(*result, raw);
  }
}

// Found by fuzz/store_blob_fuzzer (fuzz/regressions/store_blob/
// huge_declared_size): a damaged row and frame that agree on a size of
// almost 4 GiB made the decoder allocate it for a 13-byte frame. This
// 14-byte frame declares 64 MiB and holds one RLE block of 1000 bytes.
TEST(ZstdCodecTest, RefusesARecordedSizeTheFrameCannotHold) {
  const std::string frame("\x28\xb5\x2f\xfd"   // magic
                          "\x80\x38"             // 4-byte content size, 128 KiB window
                          "\x00\x00\x00\x04"   // content size 64 MiB
                          "\x43\x1f\x00\x2a",  // last block, RLE, 1000 x '*'
                          14);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), 64u << 20);
  auto result = ZstdDecompress(frame, 64u << 20, nullptr);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "zstd: a 14-byte frame cannot hold 67108864 bytes");
}

TEST(ZstdCodecTest, TheMostCompressibleFramesStillDecode) {
  const std::string zeros(8 << 20, '\0');
  for (int level : {1, 19}) {
    auto frame = ZstdCompress(zeros, level, nullptr);
    ASSERT_TRUE(frame);
    auto back = ZstdDecompress(*frame, zeros.size(), nullptr);
    ASSERT_TRUE(back) << "level " << level << ", " << frame->size() << "-byte frame: " << back.error().message;
    EXPECT_EQ(*back, zeros);
  }
}

TEST(ZstdCodecTest, DictionaryRoundTripsAndIsRequired) {
  std::vector<std::string> samples;
  for (uint64_t i = 0; i < 64; ++i) samples.push_back(TestExecutable(i, 2048));
  auto trained = TrainZstdDictionary(samples, 16 * 1024);
  ASSERT_TRUE(trained) << trained.error().message;
  auto dictionary = ZstdDictionary::Create(*trained, 3);
  ASSERT_TRUE(dictionary) << dictionary.error().message;
  EXPECT_NE((*dictionary)->id(), 0u);

  const std::string raw = TestExecutable(1000, 2048);
  auto frame = ZstdCompress(raw, 3, dictionary->get());
  ASSERT_TRUE(frame);
  EXPECT_EQ(*ZstdFrameDictionaryId(*frame), (*dictionary)->id());
  auto back = ZstdDecompress(*frame, raw.size(), dictionary->get());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, raw);
  EXPECT_FALSE(ZstdDecompress(*frame, raw.size(), nullptr));  // needs its dictionary
}

TEST(ZstdCodecTest, RejectsBytesThatAreNotADictionary) {
  EXPECT_FALSE(ZstdDictionary::Create("not a dictionary at all", 3));
  EXPECT_FALSE(TrainZstdDictionary({"a", "b"}, 1024));
}

}  // namespace
}  // namespace kiln::cache
