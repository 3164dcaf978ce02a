// GET /v1/stats and /metrics read the store's running totals: exact per
// namespace and chip, and exact when another process (`kiln inspect
// evict`) writes the same file while the server runs.
#include <gtest/gtest.h>

#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::ServerEnv;

using testing::kText;
constexpr std::string_view kShared = "Content-Type: text/plain\r\nX-Kiln-Namespace: shared\r\n";

std::string Compile(const ServerEnv& env, const std::string& hlo, std::string_view headers, std::string_view query = "") {
  auto answer = env.Call("POST", "/v1/compile" + std::string(query), hlo, headers);
  EXPECT_EQ(answer.status, 200) << answer.body;
  return ServerEnv::Json(answer).value("key", "");
}

bool HasLine(const std::string& text, const std::string& line) { return text.find("\n" + line + "\n") != std::string::npos; }

TEST(ServerStatsTest, FiguresPerNamespaceAndChipFollowCompilesDeletesAndOtherProcesses) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string add = Compile(env, testing::kAddModule, kText);
  const std::string negate = Compile(env, testing::NegateModule(4), kText, "?chip=v6e");
  Compile(env, testing::NegateModule(8), kShared);

  json stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["entries"], 2);
  ASSERT_EQ(stats["by_chip"].size(), 2u);
  EXPECT_EQ(stats["by_chip"][0]["chip"], "v5e");
  EXPECT_EQ(stats["by_chip"][1]["chip"], "v6e");
  EXPECT_EQ(stats["by_chip"][0]["stored_bytes"].get<uint64_t>() + stats["by_chip"][1]["stored_bytes"].get<uint64_t>(),
            stats["stored_bytes"].get<uint64_t>());
  json entries = ServerEnv::Json(env.Call("GET", "/v1/entries"))["entries"];
  uint64_t listed_raw = 0;
  for (const json& entry : entries) listed_raw += entry["raw_bytes"].get<uint64_t>();
  EXPECT_EQ(stats["raw_bytes"], listed_raw) << "totals agree with the listing";
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats", "", "X-Kiln-Namespace: shared\r\n"))["entries"], 1);
  EXPECT_TRUE(HasLine(env.Call("GET", "/metrics").body, "kiln_cache_entries 3"));

  // Through the API ...
  ASSERT_EQ(env.Call("DELETE", "/v1/executables/" + negate).status, 204);
  stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["entries"], 1);
  EXPECT_EQ(stats["evictions"], 1);
  ASSERT_EQ(stats["by_chip"].size(), 1u);

  // ... and from another process writing the same file.
  const std::string db = (env.dir() / "kiln.db").string();
  testing::CommandResult evicted = testing::RunCommand(std::string(KILN_BINARY) + " inspect evict " + add +
                                                       " --db " + db + " --chip v5e 2>&1");
  ASSERT_EQ(evicted.exit_code, 0) << evicted.out;
  stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["entries"], 0);
  EXPECT_EQ(stats["stored_bytes"], 0);
  EXPECT_EQ(stats["by_chip"].size(), 0u);
  EXPECT_EQ(stats["evictions"], 2);
  const std::string metrics = env.Call("GET", "/metrics").body;
  EXPECT_TRUE(HasLine(metrics, "kiln_cache_entries 1")) << metrics;
  EXPECT_TRUE(HasLine(metrics, "kiln_cache_evictions_total 2")) << metrics;
}

}  // namespace
}  // namespace kiln::api
