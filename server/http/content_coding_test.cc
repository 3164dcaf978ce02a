#include "server/http/content_coding.h"

#include <gtest/gtest.h>

#include "server/http/error_status.h"

namespace kiln::http {
namespace {

std::string Repetitive(size_t size) {
  std::string text;
  while (text.size() < size) text += "fusion.42 = f32[128,256] add(p0, p1) ";
  text.resize(size);
  return text;
}

TEST(ContentCodingTest, ZstdRoundTrip) {
  std::string original = Repetitive(100000);
  std::string compressed = ZstdCompress(original, 1);
  EXPECT_LT(compressed.size(), original.size() / 10);
  auto decoded = ZstdDecompress(compressed, original.size());
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, original);
}

TEST(ContentCodingTest, DecompressionStopsAtTheLimit) {
  std::string compressed = ZstdCompress(Repetitive(1 << 20), 3);
  auto decoded = ZstdDecompress(compressed, 1000);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(HttpStatusOf(decoded.error()), 413);
}

TEST(ContentCodingTest, CorruptAndTruncatedFramesAre400) {
  std::string compressed = ZstdCompress(Repetitive(5000), 1);
  auto truncated =
      ZstdDecompress(std::string_view(compressed).substr(0, compressed.size() / 2), 1 << 20);
  ASSERT_FALSE(truncated);
  EXPECT_EQ(HttpStatusOf(truncated.error()), 400);
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);
  auto garbage = ZstdDecompress("definitely not zstd", 1 << 20);
  ASSERT_FALSE(garbage);
  EXPECT_EQ(HttpStatusOf(garbage.error()), 400);
  EXPECT_FALSE(ZstdDecompress("", 1 << 20));
}

TEST(ContentCodingTest, DecodeRequestBodyByContentEncoding) {
  Request request;
  request.body = ZstdCompress("hello", 1);
  request.headers.Add("Content-Encoding", "ZSTD");
  ASSERT_TRUE(DecodeRequestBody(request, 100));
  EXPECT_EQ(request.body, "hello");
  EXPECT_FALSE(request.headers.Has("Content-Encoding"));

  Request plain;
  plain.body = "as is";
  ASSERT_TRUE(DecodeRequestBody(plain, 100));
  EXPECT_EQ(plain.body, "as is");

  Request gzip;
  gzip.headers.Add("Content-Encoding", "gzip");
  auto refused = DecodeRequestBody(gzip, 100);
  ASSERT_FALSE(refused);
  EXPECT_EQ(HttpStatusOf(refused.error()), 415);

  // Two fields are one list: zstd applied twice, not once.
  Request twice;
  twice.body = ZstdCompress("hello", 1);
  twice.headers.Add("Content-Encoding", "zstd");
  twice.headers.Add("Content-Encoding", "zstd");
  auto stacked = DecodeRequestBody(twice, 100);
  ASSERT_FALSE(stacked);
  EXPECT_EQ(HttpStatusOf(stacked.error()), 415);
  EXPECT_NE(stacked.error().message.find("\"zstd, zstd\""), std::string::npos) << stacked.error().message;
}

TEST(ContentCodingTest, ChooseWireBodyCompressesOnlyWhenAllowed) {
  CompressionPolicy policy{.min_bytes = 1024, .level = 1};
  Response big = Response::Text(200, Repetitive(4096));
  WireBody wire = ChooseWireBody(big, /*client_accepts_zstd=*/true, true, policy);
  EXPECT_TRUE(wire.zstd);
  EXPECT_EQ(ZstdDecompress(*wire.bytes, 1 << 20).value(), big.body_view());

  EXPECT_FALSE(ChooseWireBody(big, false, true, policy).zstd);
  EXPECT_FALSE(ChooseWireBody(big, true, /*compress_allowed=*/false, policy).zstd);
  Response small = Response::Text(200, Repetitive(100));
  EXPECT_FALSE(ChooseWireBody(small, true, true, policy).zstd);
  big.compressible = false;
  EXPECT_FALSE(ChooseWireBody(big, true, true, policy).zstd);
  EXPECT_EQ(ChooseWireBody(big, true, true, policy).bytes, big.body);  // shared, not copied
}

TEST(ContentCodingTest, PrecompressedBodyIsSentWhenAccepted) {
  Response response = Response::Text(200, "tiny");
  response.zstd_body = MakeBytes(ZstdCompress("tiny", 1));
  WireBody wire = ChooseWireBody(response, true, /*compress_allowed=*/false, {});
  EXPECT_TRUE(wire.zstd);
  EXPECT_EQ(wire.bytes, response.zstd_body);
  EXPECT_EQ(ChooseWireBody(response, false, true, {}).bytes, response.body);
}

}  // namespace
}  // namespace kiln::http
