// Execute limits end to end: deadlines, a client that goes away, runaway
// loops sharing a small pool, SIGTERM during a runaway run, the step budget
// and the host-memory budget. Most run the real `kiln serve` binary
// (KilnServeProcess); the ones that need a service option without a flag
// run the service in process (ServerEnv).
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "server/service/run_limits.h"
#include "server/service/program_cache.h"
#include "tests/kiln_serve_process.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::kAddInputs;
using testing::KilnServeProcess;
using testing::kSpinInputs;
using testing::kSpinModule;
using testing::ServerEnv;

using testing::kText;
using testing::kJson;

// A 4-byte input broadcast to 4 GB.
constexpr const char* kBillionModule = R"(HloModule billion

ENTRY main {
  p = f32[] parameter(0)
  ROOT b = f32[1000000000] broadcast(p), dimensions={}
}
)";


std::string Execute(const std::string& key) { return "/v1/executables/" + key + "/execute"; }

using testing::Body;
using testing::ErrorCode;
using testing::ErrorMessage;

template <typename Server>
std::string Compile(const Server& server, std::string_view hlo) {
  json answer = Body(server.Call("POST", "/v1/compile", hlo, kText));
  EXPECT_TRUE(answer.contains("key")) << answer.dump();
  return answer.value("key", "");
}

// Polls /v1/pool until `busy` chips run and `queued` runs wait (30 s at most).
template <typename Server>
void WaitForPool(const Server& server, int busy, int queued = 0) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    json pool = Body(server.Call("GET", "/v1/pool"));
    int running = 0;
    for (const json& chip : pool["chips"]) running += chip["busy"].get<bool>() ? 1 : 0;
    if (running >= busy && pool["queue_depth"].get<int>() >= queued) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the pool never had " << busy << " busy chips and " << queued << " queued runs";
}

TEST(ServerExecLimitsTest, RunawayLoopEndsWithTheDeadlineStatus) {
  KilnServeProcess serve({"--pool", "v5e:1", "--execute-timeout", "1500ms", "--pool-queue", "5"});
  ASSERT_TRUE(serve.ok());
  const std::string key = Compile(serve, kSpinModule);

  // The server's limit: a client cannot raise it.
  auto ran = serve.Call("POST", Execute(key) + "?timeout=1h", kSpinInputs, kJson);
  EXPECT_EQ(ran.status, 504) << ran.body;
  EXPECT_EQ(ErrorCode(ran), "deadline_exceeded");
  const std::string message = ErrorMessage(ran);
  EXPECT_NE(message.find("exceeded its 1.5 s deadline"), std::string::npos) << message;
  EXPECT_NE(message.find("ran "), std::string::npos) << message;
  EXPECT_NE(message.find("on v5e:0"), std::string::npos) << message;
  EXPECT_NE(message.find("in while loop %loop"), std::string::npos) << message;

  // A client may lower it, by query parameter or header (the smaller wins).
  ran = serve.Call("POST", Execute(key) + "?timeout=300ms", kSpinInputs, kJson);
  EXPECT_EQ(ran.status, 504);
  EXPECT_NE(ErrorMessage(ran).find("exceeded its 300 ms deadline"), std::string::npos) << ran.body;
  ran = serve.Call("POST", Execute(key) + "?timeout=1s", kSpinInputs, std::string(kJson) + "X-Kiln-Timeout: 200ms\r\n");
  EXPECT_EQ(ran.status, 504);
  EXPECT_NE(ErrorMessage(ran).find("exceeded its 200 ms deadline"), std::string::npos) << ran.body;

  // A malformed timeout is refused before anything runs.
  auto bad = serve.Call("POST", Execute(key) + "?timeout=soon", kSpinInputs, kJson);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(ErrorMessage(bad).find("query parameter timeout"), std::string::npos) << bad.body;

  json pool = Body(serve.Call("GET", "/v1/pool"));
  EXPECT_EQ(pool["stopped"]["deadline_total"], 3);
  EXPECT_EQ(pool["execute_timeout_ms"], 1500);
  EXPECT_EQ(pool["kinds"][0]["queue_capacity"], 5) << pool.dump();
  auto metrics = serve.Call("GET", "/metrics");
  EXPECT_NE(metrics.body.find("kiln_execute_ended_total{reason=\"deadline\"} 3\n"), std::string::npos);
}

TEST(ServerExecLimitsTest, AClientThatGoesAwayFreesItsChip) {
  KilnServeProcess serve({"--pool", "v5e:1", "--execute-timeout", "60s"});
  ASSERT_TRUE(serve.ok());
  const std::string spin = Compile(serve, kSpinModule);
  const std::string add = Compile(serve, testing::kAddModule);
  {
    Result<http::testing::RawHttpClient> client = http::testing::RawHttpClient::Connect(serve.port());
    ASSERT_TRUE(client) << client.error().message;
    ASSERT_TRUE(client->Send(http::testing::MakeRequest("POST", Execute(spin), kSpinInputs, kJson)));
    WaitForPool(serve, 1);
  }  // the client closes its connection mid-run

  // Only the cancellation can free the one chip within this run's 20 s.
  auto ran = serve.Call("POST", Execute(add) + "?timeout=20s", kAddInputs, kJson);
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(Body(ran)["outputs"][0]["data"], json({11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(Body(serve.Call("GET", "/v1/pool"))["stopped"]["cancelled_total"], 1);
}

TEST(ServerExecLimitsTest, RunawayLoopsDoNotStarveANormalExecute) {
  KilnServeProcess serve({"--pool", "v5e:2", "--execute-timeout", "60s"});
  ASSERT_TRUE(serve.ok());
  const std::string spin = Compile(serve, kSpinModule);
  const std::string add = Compile(serve, testing::kAddModule);
  std::vector<int> statuses(4);
  std::vector<std::thread> runaways;
  for (int i = 0; i < 4; ++i) {
    runaways.emplace_back(
        [&, i] { statuses[i] = serve.Call("POST", Execute(spin) + "?timeout=2s", kSpinInputs, kJson).status; });
  }
  WaitForPool(serve, 2, 2);  // both chips spin, two more runaways wait
  auto ran = serve.Call("POST", Execute(add), kAddInputs, kJson);
  for (std::thread& t : runaways) t.join();
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(Body(ran)["outputs"][0]["data"], json({11, 22, 33, 44, 55, 66}));
  for (int status : statuses) EXPECT_EQ(status, 504);
}

// A run works on the program it loaded: deleting its entry meanwhile
// succeeds (the store keeps no pin for a run), the run goes on to its own
// end, and the entry is gone after.
TEST(ServerExecLimitsTest, DeletingAnEntryWhileItRunsDeletesItAndTheRunGoesOn) {
  KilnServeProcess serve({"--pool", "v5e:1", "--execute-timeout", "60s"});
  ASSERT_TRUE(serve.ok());
  const std::string spin = Compile(serve, kSpinModule);
  http::testing::RawResponse ran;
  std::thread client([&] { ran = serve.Call("POST", Execute(spin) + "?timeout=2s", kSpinInputs, kJson); });
  WaitForPool(serve, 1);
  auto deleted = serve.Call("DELETE", "/v1/executables/" + spin);
  EXPECT_EQ(deleted.status, 204) << deleted.body;
  EXPECT_EQ(serve.Call("GET", "/v1/executables/" + spin).status, 404);
  client.join();
  EXPECT_EQ(ran.status, 504) << ran.body;
  EXPECT_EQ(ErrorCode(ran), "deadline_exceeded");
}

TEST(ServerExecLimitsTest, SigtermDuringARunawayExecuteExitsWithinTheGracePeriod) {
  KilnServeProcess serve({"--pool", "v5e:1", "--execute-timeout", "60s", "--shutdown-grace", "2s"});
  ASSERT_TRUE(serve.ok());
  const std::string spin = Compile(serve, kSpinModule);
  http::testing::RawResponse answer;
  std::thread client([&] { answer = serve.Call("POST", Execute(spin), kSpinInputs, kJson); });
  WaitForPool(serve, 1);
  serve.Signal(SIGTERM);
  // The run would spin for 60 s; stopped, the server exits about when its
  // 2 s grace ends (the bound leaves room for a loaded machine).
  std::optional<int> exit_status = serve.WaitForExit(std::chrono::seconds(20));
  client.join();
  ASSERT_TRUE(exit_status) << "kiln serve still running 20 s after SIGTERM";
  EXPECT_EQ(*exit_status, 0);
  EXPECT_EQ(answer.status, 503) << answer.body;
  EXPECT_EQ(ErrorCode(answer), "draining");
  EXPECT_EQ(answer.headers.Get("Retry-After"), "1");
}

TEST(ServerExecLimitsTest, BroadcastToABillionFloatsUnderASmallBudgetIsRefusedWithoutAllocating) {
  KilnServeProcess serve({"--pool", "v5e:1", "--host-memory", "1GiB"});
  ASSERT_TRUE(serve.ok());
  const std::string key = Compile(serve, kBillionModule);
  auto ran = serve.Call("POST", Execute(key), R"({"inputs":[{"shape":[],"dtype":"f32","data":[1]}]})",
                        std::string(kJson) + "Accept: application/vnd.safetensors\r\n");
  EXPECT_EQ(ran.status, 413) << ran.body;
  EXPECT_EQ(ErrorCode(ran), "too_large_to_run");
  // 4 GB of result buffer and 4 GB of answer.
  EXPECT_NE(ErrorMessage(ran).find("the run needs 7."), std::string::npos) << ran.body;
  EXPECT_NE(ErrorMessage(ran).find("whole budget of 1.00 GiB"), std::string::npos) << ran.body;

  json memory = Body(serve.Call("GET", "/v1/pool"))["host_memory"];
  EXPECT_EQ(memory["budget_bytes"], uint64_t{1} << 30);
  EXPECT_EQ(memory["in_use_bytes"], 0);
  EXPECT_EQ(memory["refused_total"], 1);
  auto metrics = serve.Call("GET", "/metrics");
  EXPECT_NE(metrics.body.find("kiln_host_memory_budget_bytes 1073741824\n"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("kiln_execute_ended_total{reason=\"too_large\"} 1\n"), std::string::npos);

  // Nothing was allocated: the server's peak resident memory stayed far
  // below the 4 GB a run would have touched.
  std::ifstream status("/proc/" + std::to_string(serve.pid()) + "/status");
  std::string line;
  uint64_t peak_kib = 0;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) peak_kib = std::stoull(line.substr(6));
  }
  EXPECT_GT(peak_kib, 0u);
  EXPECT_LT(peak_kib, uint64_t{1} << 20) << "peak RSS " << peak_kib << " KiB";
}

TEST(ServerExecLimitsTest, TheDefaultStepBudgetEndsWhileTrue) {
  ApiOptions options;
  options.pool_spec = "v5e:1";
  options.execute_timeout = std::chrono::minutes(10);  // only the budget can end it
  ServerEnv env(options);
  ASSERT_TRUE(env.ok());
  const std::string key = Compile(env, kSpinModule);
  auto ran = env.Call("POST", Execute(key), kSpinInputs, kJson);
  EXPECT_EQ(ran.status, 422) << ran.body;
  EXPECT_EQ(ErrorCode(ran), "execution_failed");
  EXPECT_NE(ErrorMessage(ran).find("step budget of 4294967296 exhausted in while loop %loop"), std::string::npos)
      << ran.body;
}

TEST(ServerExecLimitsTest, ARunThatCannotGetHostMemoryInTimeAnswers503) {
  // The budget fits one run of the spin module but not two.
  uint64_t run_bytes = 0;
  {
    ServerEnv probe;
    ASSERT_TRUE(probe.ok());
    const std::string key = Compile(probe, kSpinModule);
    auto bytes = probe.Call("GET", "/v1/executables/" + key);
    ASSERT_EQ(bytes.status, 200);
    auto ready = service::LoadReadyProgram(std::span(reinterpret_cast<const uint8_t*>(bytes.body.data()), bytes.body.size()));
    ASSERT_TRUE(ready) << ready.error().message;
    run_bytes = service::RunHostBytes(**ready, /*json_answer=*/true);
  }
  ASSERT_GT(run_bytes, 0u);
  ApiOptions options;
  options.pool_spec = "v5e:2";
  options.host_memory_bytes = run_bytes + run_bytes / 2;
  options.host_memory_wait = std::chrono::milliseconds(200);
  ServerEnv env(options);
  ASSERT_TRUE(env.ok());
  const std::string key = Compile(env, kSpinModule);
  http::testing::RawResponse first;
  std::thread holder([&] { first = env.Call("POST", Execute(key) + "?timeout=3s", kSpinInputs, kJson); });
  WaitForPool(env, 1);
  auto second = env.Call("POST", Execute(key), kSpinInputs, kJson);
  EXPECT_EQ(second.status, 503) << second.body;
  EXPECT_EQ(ErrorCode(second), "host_memory_busy");
  EXPECT_EQ(second.headers.Get("Retry-After"), "5");
  EXPECT_NE(ErrorMessage(second).find("held by 1 running job"), std::string::npos) << second.body;
  json memory = Body(env.Call("GET", "/v1/pool"))["host_memory"];
  EXPECT_EQ(memory["in_use_bytes"], run_bytes);
  EXPECT_EQ(memory["busy_total"], 1);
  holder.join();
  EXPECT_EQ(first.status, 504);
}

}  // namespace
}  // namespace kiln::api
