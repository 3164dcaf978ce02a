#include "server/api/serve_options.h"

#include <gtest/gtest.h>

#include <map>

namespace kiln::api {
namespace {

TEST(ServeOptionsTest, SharedLeaseAndTtlBoundsSayWhatIsAccepted) {
  EXPECT_EQ(*ParseSharedLease("15s"), std::chrono::seconds(15));
  EXPECT_EQ(*ParseSharedLease("1s"), std::chrono::seconds(1));
  EXPECT_EQ(*ParseSharedLease("10m"), std::chrono::minutes(10));
  for (const char* bad : {"1ms", "999ms", "11m", "2h", "x"}) {
    Result<std::chrono::milliseconds> refused = ParseSharedLease(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("from 1s to 10m"), std::string::npos) << refused.error().message;
  }
  EXPECT_EQ(*ParseSharedTtl("365d"), std::chrono::hours(24 * 365));
  EXPECT_EQ(*ParseSharedTtl("12h"), std::chrono::hours(12));
  EXPECT_EQ(*ParseSharedTtl("0"), std::chrono::milliseconds(0));
  for (const char* bad : {"-1s", "366d", "0d", "25h"}) {
    Result<std::chrono::milliseconds> refused = ParseSharedTtl(bad);
    ASSERT_FALSE(refused) << bad;
    // The message names every form that is accepted, 365d included.
    EXPECT_NE(refused.error().message.find("1d to 365d"), std::string::npos) << refused.error().message;
  }
}

TEST(ServeOptionsTest, HostMemoryIsASizeOrAShareOfRam) {
  EXPECT_EQ(*ParseHostMemory("8GiB", 0), uint64_t{8} << 30);
  EXPECT_EQ(*ParseHostMemory("50%", uint64_t{24} << 30), uint64_t{12} << 30);
  EXPECT_EQ(*ParseHostMemory("0", uint64_t{24} << 30), 0u) << "no budget";
  EXPECT_FALSE(ParseHostMemory("101%", uint64_t{24} << 30));
  EXPECT_FALSE(ParseHostMemory("50%", 0)) << "RAM unknown";
  EXPECT_FALSE(ParseHostMemory("lots", uint64_t{24} << 30));
  EXPECT_GT(PhysicalMemoryBytes(), 0u);
}

TEST(ServeOptionsTest, ListenAddresses) {
  EXPECT_EQ(ParseListenAddress("127.0.0.1:8470")->port, 8470);
  EXPECT_EQ(ParseListenAddress("0.0.0.0:0")->host, "0.0.0.0");
  EXPECT_EQ(ParseListenAddress(":9000")->host, "127.0.0.1");
  EXPECT_EQ(ParseListenAddress("[::1]:80")->host, "::1");
  EXPECT_EQ(ParseListenAddress("8080")->port, 8080);
  EXPECT_FALSE(ParseListenAddress("localhost:99999"));
  EXPECT_FALSE(ParseListenAddress("localhost:http"));
}

TEST(ServeOptionsTest, EnvironmentFillsFlagsNotGiven) {
  std::map<std::string, std::string> env = {{"KILN_DB", "/tmp/x.db"},
                                            {"KILN_POOL", "v6e:2"},
                                            {"KILN_MAX_BODY", "1MiB"},
                                            {"KILN_COMPILE_THREADS", "3"},
                                            {"KILN_LISTEN", "127.0.0.1:9999"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ServeOptions options;
  options.pool = "v5e:8";
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view flag) { return flag == "--pool"; }, getenv));
  EXPECT_EQ(options.db_path, "/tmp/x.db");
  EXPECT_EQ(options.pool, "v5e:8") << "a flag wins over its variable";
  EXPECT_EQ(options.max_body_bytes, uint64_t{1} << 20);
  EXPECT_EQ(options.compile_threads, 3);
  EXPECT_EQ(options.listen.port, 9999);

  env["KILN_MAX_BYTES"] = "lots";
  Status bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_MAX_BYTES"), std::string::npos);
}

TEST(ServeOptionsTest, ExecuteLimitsFromTheEnvironment) {
  std::map<std::string, std::string> env = {
      {"KILN_EXECUTE_TIMEOUT", "5s"}, {"KILN_HOST_MEMORY", "2GiB"}, {"KILN_SHUTDOWN_GRACE", "1500ms"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ServeOptions options;
  EXPECT_EQ(options.execute_timeout, std::chrono::seconds(60));
  EXPECT_EQ(options.host_memory, "50%");
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view) { return false; }, getenv));
  EXPECT_EQ(options.execute_timeout, std::chrono::seconds(5));
  EXPECT_EQ(options.host_memory, "2GiB");
  EXPECT_EQ(options.shutdown_grace, std::chrono::milliseconds(1500));

  env["KILN_EXECUTE_TIMEOUT"] = "soon";
  Status bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_EXECUTE_TIMEOUT"), std::string::npos);
  env["KILN_EXECUTE_TIMEOUT"] = "5s";
  env["KILN_HOST_MEMORY"] = "200%";
  bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_HOST_MEMORY"), std::string::npos);
}

TEST(ServeOptionsTest, BackgroundTuningIsOffUnlessGiven) {
  std::map<std::string, std::string> env;
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ServeOptions options;
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view) { return false; }, getenv));
  EXPECT_EQ(options.tune_in_background.count(), 0);
  env["KILN_TUNE_IN_BACKGROUND"] = "2m";
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view) { return false; }, getenv));
  EXPECT_EQ(options.tune_in_background, std::chrono::minutes(2));
  ServeOptions flagged;
  ASSERT_TRUE(ApplyEnvironment(flagged, [](std::string_view flag) { return flag == "--tune-in-background"; }, getenv));
  EXPECT_EQ(flagged.tune_in_background.count(), 0) << "the flag wins";
  env["KILN_TUNE_IN_BACKGROUND"] = "0";
  Status bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_TUNE_IN_BACKGROUND"), std::string::npos);
}

TEST(ServeOptionsTest, LoopsAndAccessLogFromTheEnvironment) {
  std::map<std::string, std::string> env = {{"KILN_LOOPS", "3"}, {"KILN_ACCESS_LOG", "OFF"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ServeOptions options;
  EXPECT_EQ(options.loops, 0) << "default: one loop per core";
  EXPECT_TRUE(options.access_log);
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view) { return false; }, getenv));
  EXPECT_EQ(options.loops, 3);
  EXPECT_FALSE(options.access_log);

  env["KILN_ACCESS_LOG"] = "sometimes";
  Status bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_ACCESS_LOG"), std::string::npos);
  env["KILN_ACCESS_LOG"] = "on";
  env["KILN_LOOPS"] = "many";
  bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_LOOPS"), std::string::npos);
}

TEST(ServeOptionsTest, PoolQueueFromTheEnvironment) {
  std::map<std::string, std::string> env = {{"KILN_POOL_QUEUE", "500"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ServeOptions options;
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view) { return false; }, getenv));
  EXPECT_EQ(options.pool_queue_capacity, 500u);
  options.pool_queue_capacity = 3;
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view flag) { return flag == "--pool-queue"; }, getenv));
  EXPECT_EQ(options.pool_queue_capacity, 3u) << "the flag wins";
  for (const char* bad_value : {"0", "many", "-1", "99999999"}) {
    env["KILN_POOL_QUEUE"] = bad_value;
    Status bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
    ASSERT_FALSE(bad) << bad_value;
    EXPECT_NE(bad.error().message.find("KILN_POOL_QUEUE"), std::string::npos) << bad.error().message;
  }
}

TEST(ServeOptionsTest, MaxConnectionsFromTheEnvironment) {
  std::map<std::string, std::string> env = {{"KILN_MAX_CONNECTIONS", "5000"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ServeOptions options;
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view) { return false; }, getenv));
  EXPECT_EQ(options.max_connections, 5000u);
  options.max_connections = 7;
  ASSERT_TRUE(ApplyEnvironment(options, [](std::string_view flag) { return flag == "--max-connections"; }, getenv));
  EXPECT_EQ(options.max_connections, 7u) << "the flag wins";
  env["KILN_MAX_CONNECTIONS"] = "many";
  Status bad = ApplyEnvironment(options, [](std::string_view) { return false; }, getenv);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("KILN_MAX_CONNECTIONS"), std::string::npos);
}

TEST(ServeOptionsTest, DefaultMaxConnectionsLeavesDescriptorsForTheRest) {
  EXPECT_EQ(DefaultMaxConnections(1024, 2), 1024u - 128 - 16);
  EXPECT_EQ(DefaultMaxConnections(65536, 8), 65536u - 128 - 64);
  // A small limit: a quarter of it for connections.
  EXPECT_EQ(DefaultMaxConnections(64, 2), 16u);
  // Unlimited (or absurdly high) counts as 2^20.
  EXPECT_EQ(DefaultMaxConnections(0, 1), (uint64_t{1} << 20) - 136);
  EXPECT_EQ(DefaultMaxConnections(uint64_t{1} << 40, 1), (uint64_t{1} << 20) - 136);
}

}  // namespace
}  // namespace kiln::api
