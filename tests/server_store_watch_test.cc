// A server sharing its store with other processes: an entry `kiln inspect
// evict` deletes (or another process rewrites) stops being served from the
// server's memory within the watch interval (server/service/store_watcher.h).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using testing::RunCommand;
using testing::ServerEnv;

// Compiles `module`; the answer's "cache" field and key.
std::pair<std::string, std::string> CompileModule(const ServerEnv& env, const std::string& module) {
  nlohmann::json answer = ServerEnv::Json(env.Call("POST", "/v1/compile", module));
  if (!answer.is_object() || !answer.contains("cache")) return {"", ""};
  return {answer["cache"].get<std::string>(), answer["key"].get<std::string>()};
}

// GET /v1/executables/KEY's status, polled until it is `want` or ~5 s pass.
int StatusWithin(const ServerEnv& env, const std::string& key, int want) {
  int status = 0;
  for (int i = 0; i < 250 && status != want; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = env.Call("GET", "/v1/executables/" + key).status;
  }
  return status;
}

void EvictElsewhere(const ServerEnv& env, const std::string& key) {
  const std::string db = (env.dir() / "kiln.db").string();
  testing::CommandResult evicted = RunCommand(std::string(KILN_BINARY) + " inspect evict " + key + " --db " + db);
  ASSERT_EQ(evicted.exit_code, 0) << evicted.out;
}

TEST(ServerStoreWatchTest, AnEntryEvictedByAnotherProcessIsNoLongerServed) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string module = testing::NegateModule(8);
  auto [first, key] = CompileModule(env, module);
  ASSERT_EQ(first, "miss");
  ASSERT_EQ(CompileModule(env, module).first, "hit");
  ASSERT_EQ(env.Call("GET", "/v1/executables/" + key).status, 200);  // held in memory now

  EvictElsewhere(env, key);
  EXPECT_EQ(StatusWithin(env, key, 404), 404) << "still served from memory after the eviction";
  EXPECT_EQ(CompileModule(env, module).first, "miss") << "compiled again, not answered from a stale copy";
  EXPECT_EQ(CompileModule(env, module).first, "hit");
}

// The control: with the watcher effectively off, the same eviction leaves
// the server's copy in memory, so the test above passes because of the
// watcher and not by chance.
TEST(ServerStoreWatchTest, WithoutWatchingTheHeldCopyIsServed) {
  ApiOptions options;
  options.store_watch_interval = std::chrono::hours(1);
  ServerEnv env(options);
  ASSERT_TRUE(env.ok());
  const std::string module = testing::NegateModule(16);
  auto [first, key] = CompileModule(env, module);
  ASSERT_EQ(first, "miss");
  ASSERT_EQ(CompileModule(env, module).first, "hit");
  EvictElsewhere(env, key);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(CompileModule(env, module).first, "hit");
}

}  // namespace
}  // namespace kiln::api
