#include "cache/shared/redis_url.h"

#include <gtest/gtest.h>

namespace kiln::cache::shared {
namespace {

TEST(RedisUrlTest, OneServerWithCredentialsAndDatabase) {
  auto url = ParseRedisUrl("redis://kiln:s%40cret@cache.internal:6380/3");
  ASSERT_TRUE(url) << url.error().ToString();
  EXPECT_FALSE(url->tls);
  EXPECT_FALSE(url->cluster);
  ASSERT_EQ(url->nodes.size(), 1u);
  EXPECT_EQ(url->nodes[0], (RedisNode{"cache.internal", 6380}));
  EXPECT_EQ(url->user, "kiln");
  EXPECT_EQ(url->password, "s@cret");
  EXPECT_EQ(url->db, 3);
  EXPECT_EQ(url->Redacted(), "redis://kiln:***@cache.internal:6380/3");
}

TEST(RedisUrlTest, DefaultsPortAndTakesPasswordOnly) {
  auto url = ParseRedisUrl("rediss://:pw@10.0.0.5");
  ASSERT_TRUE(url) << url.error().ToString();
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->nodes[0].port, 6379);
  EXPECT_EQ(url->user, "");
  EXPECT_EQ(url->password, "pw");
  EXPECT_EQ(url->Redacted(), "rediss://:***@10.0.0.5:6379");
}

TEST(RedisUrlTest, ClusterSeedListInEitherSpelling) {
  for (const char* text : {"redis://a:7000,b:7001,[::1]:7002", "redis://a:7000,redis://b:7001,redis://[::1]:7002"}) {
    auto url = ParseRedisUrl(text);
    ASSERT_TRUE(url) << text << ": " << url.error().ToString();
    EXPECT_TRUE(url->cluster);
    ASSERT_EQ(url->nodes.size(), 3u);
    EXPECT_EQ(url->nodes[2], (RedisNode{"::1", 7002}));
    EXPECT_EQ(url->Redacted(), "redis://a:7000,b:7001,[::1]:7002");
  }
}

TEST(RedisUrlTest, EnvironmentFillsMissingCredentialsOnly) {
  auto from_env = ParseRedisUrl("redis://h:1", "ops", "envpw");
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env->user, "ops");
  EXPECT_EQ(from_env->password, "envpw");
  auto from_url = ParseRedisUrl("redis://:urlpw@h:1", "", "envpw");
  ASSERT_TRUE(from_url);
  EXPECT_EQ(from_url->password, "urlpw");
}

TEST(RedisUrlTest, RefusalsSayWhatIsWrongWithoutThePassword) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {Case{"http://h:1", "unknown scheme 'http'"}, Case{"h:6379", "no scheme"},
                        Case{"redis://", "no host"}, Case{"redis://:topsecret@h:99999", "port '99999'"},
                        Case{"redis://h:1/x", "database 'x'"}, Case{"redis://a:1,rediss://b:2", "mixes"},
                        Case{"redis://a:1,b:2/4", "only database 0"}, Case{"redis://a:1,,b:2", "seed 2 is empty"},
                        Case{"redis://u@h:1", "user 'u' has no password"}, Case{"redis://:%zz@h:1", "%-escape"}}) {
    auto url = ParseRedisUrl(c.text);
    ASSERT_FALSE(url) << c.text;
    EXPECT_EQ(url.error().reason(), "invalid_shared_url");
    EXPECT_NE(url.error().message.find(c.says), std::string::npos) << c.text << ": " << url.error().message;
    EXPECT_EQ(url.error().message.find("topsecret"), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::cache::shared
