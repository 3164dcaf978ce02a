#include "server/http/header_map.h"

#include <gtest/gtest.h>

namespace kiln::http {
namespace {

TEST(HeaderMapTest, LooksUpNamesCaseInsensitively) {
  HeaderMap headers;
  headers.Add("Content-Type", "text/plain");
  headers.Add("X-Multi", "a");
  headers.Add("x-multi", "b");
  EXPECT_EQ(headers.Get("content-type"), "text/plain");
  EXPECT_EQ(headers.Get("X-MULTI"), "a");
  EXPECT_FALSE(headers.Get("Content-Length").has_value());
  headers.Set("X-Multi", "c");
  EXPECT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers.Get("x-multi"), "c");
  headers.Remove("CONTENT-TYPE");
  EXPECT_FALSE(headers.Has("Content-Type"));
}

TEST(HeaderMapTest, ListHasTokenHonoursQualityZero) {
  EXPECT_TRUE(ListHasToken("gzip, zstd", "zstd"));
  EXPECT_TRUE(ListHasToken("gzip,ZSTD;q=0.5", "zstd"));
  EXPECT_FALSE(ListHasToken("gzip, zstd;q=0", "zstd"));
  EXPECT_FALSE(ListHasToken("zstd ; q=0.000", "zstd"));
  EXPECT_FALSE(ListHasToken("gzip, br", "zstd"));
  EXPECT_FALSE(ListHasToken("zstdx", "zstd"));
  EXPECT_FALSE(ListHasToken("", "zstd"));
}

}  // namespace
}  // namespace kiln::http
