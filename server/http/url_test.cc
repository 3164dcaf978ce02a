#include "server/http/url.h"

#include <gtest/gtest.h>

namespace kiln::http {
namespace {

TEST(UrlTest, SplitsPathAndDecodesQuery) {
  Result<ParsedTarget> parsed = ParseTarget("/v1/entries?limit=5&name=a+b%21&flag&=x");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->path, "/v1/entries");
  ASSERT_EQ(parsed->query.size(), 4u);
  EXPECT_EQ(FindParam(parsed->query, "limit"), "5");
  EXPECT_EQ(FindParam(parsed->query, "name"), "a b!");
  EXPECT_EQ(FindParam(parsed->query, "flag"), "");
  EXPECT_FALSE(FindParam(parsed->query, "missing").has_value());
}

TEST(UrlTest, KeepsPathEncodedAndRejectsBadTargets) {
  Result<ParsedTarget> parsed = ParseTarget("/a%2Fb/c");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->path, "/a%2Fb/c");
  EXPECT_FALSE(ParseTarget("*"));
  EXPECT_FALSE(ParseTarget("http://host/x"));
  Result<ParsedTarget> bad = ParseTarget("/x?q=%zz");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("percent-escape"), std::string::npos);
}

TEST(UrlTest, PercentDecode) {
  EXPECT_EQ(PercentDecode("a%20b+c", false), "a b+c");
  EXPECT_EQ(PercentDecode("a%20b+c", true), "a b c");
  EXPECT_FALSE(PercentDecode("%4", false));
  EXPECT_FALSE(PercentDecode("%", false));
}

}  // namespace
}  // namespace kiln::http
