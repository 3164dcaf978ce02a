// Faults around a real `kiln serve`: the database write-locked by another
// process, the pool saturated, a client that goes away mid-compile, SIGTERM
// while compiling. Each time the answers stay correct, nothing acknowledged
// is lost and the server keeps serving. (A full disk and a read-only store:
// server_storage_test.cc; deadlines and a client leaving mid-execute:
// server_exec_limits_test.cc.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "cache/sqlite_connection.h"
#include "tests/kiln_serve_process.h"
#include "tests/serve_process.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using http::testing::MakeRequest;
using http::testing::RawHttpClient;
using http::testing::RawResponse;
using nlohmann::json;
using testing::kAddInputs;
using testing::KilnServeProcess;
using testing::kSpinInputs;
using testing::kSpinModule;
using testing::ServerEnv;

using testing::kText;
using testing::kJson;

// A module that takes a noticeable time to parse and compile (about a
// second here): a chain of `length` elementwise ops.
std::string ChainModule(int length) {
  static constexpr const char* kOps[] = {"add", "multiply", "subtract", "maximum"};
  std::string text = "HloModule chain\n\nENTRY e {\n  p = f32[8,128] parameter(0)\n";
  std::string previous = "p";
  for (int i = 0; i < length; ++i) {
    std::string name = "a" + std::to_string(i);
    text += "  " + name + " = f32[8,128] " + kOps[i % 4] + "(" + previous + ", p)\n";
    previous = std::move(name);
  }
  return text + "  ROOT r = f32[8,128] negate(" + previous + ")\n}\n";
}
// A chain long enough that its compile is still running when the test acts
// (a client leaves, SIGTERM arrives) after seeing the request counted. How
// long a test waits on it: 300k links take 1 to 4 s in Release and 40-63 s
// sanitized on CI's 2 cores, so the sanitized tests use a third of the chain
// and the bound stays generous.
#ifdef __SANITIZE_ADDRESS__
constexpr int kSlowChainLength = 100'000;
constexpr auto kSlowCompileBound = std::chrono::seconds(240);
#else
constexpr int kSlowChainLength = 300'000;
constexpr auto kSlowCompileBound = std::chrono::seconds(60);
#endif

using testing::Body;
using testing::ErrorCode;

// Another process holding the write lock of a SQLite file: a child that
// opens it, begins an IMMEDIATE transaction and keeps it until Release (or
// destruction).
class WriteLockHolder {
 public:
  explicit WriteLockHolder(const std::string& db_path) {
    int locked[2];
    int release[2];
    if (pipe(locked) != 0 || pipe(release) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(locked[0]);
      close(release[1]);
      auto db = cache::Connection::Open(db_path, {});
      if (!db || !(*db)->Execute("BEGIN IMMEDIATE")) _exit(1);
      char byte = 'L';
      if (write(locked[1], &byte, 1) != 1) _exit(1);
      while (read(release[0], &byte, 1) > 0) {
      }  // until the parent closes its end
      (void)(*db)->Execute("ROLLBACK");
      _exit(0);
    }
    close(locked[1]);
    close(release[0]);
    release_fd_ = release[1];
    char byte = 0;
    held_ = read(locked[0], &byte, 1) == 1;
    close(locked[0]);
  }
  ~WriteLockHolder() { Release(); }

  bool held() const { return held_; }

  // Ends the transaction and waits for the child; its exit status.
  int Release() {
    if (pid_ <= 0) return -1;
    close(release_fd_);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;
  bool held_ = false;
};

TEST(ServerFaultsTest, ADatabaseLockedByAnotherProcessIsServedAroundAndNothingIsLost) {
  KilnServeProcess serve({"--pool", "v5e:1", "--loops", "1"});
  ASSERT_TRUE(serve.ok());
  RawResponse stored = serve.Call("POST", "/v1/compile", testing::kAddModule, kText);
  ASSERT_EQ(stored.status, 200) << stored.body;
  const std::string stored_key = Body(stored)["key"];

  WriteLockHolder lock(serve.db_path().string());
  ASSERT_TRUE(lock.held());
  // A compile that misses and a delete, both waiting out SQLite's 5 s busy
  // timeout at once.
  RawResponse compiled;
  std::thread compiler([&] { compiled = serve.Call("POST", "/v1/compile", testing::NegateModule(4), kText); });
  RawResponse deleted = serve.Call("DELETE", "/v1/executables/" + stored_key);
  compiler.join();

  // The compile is answered, with its executable, but not stored: why, and
  // that it passes.
  ASSERT_EQ(compiled.status, 200) << compiled.body;
  const json answer = Body(compiled);
  EXPECT_EQ(answer["cache"], "miss");
  EXPECT_EQ(answer["stored"], false);
  EXPECT_EQ(answer["not_stored"]["code"], "store_busy");
  EXPECT_NE(answer["not_stored"]["message"].get<std::string>().find("stayed locked by another connection"),
            std::string::npos)
      << answer;
  EXPECT_GT(answer["executable_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(compiled.headers.Get("X-Kiln-Store-Error"), "store_busy");
  // The delete is refused for now, with when to retry.
  EXPECT_EQ(deleted.status, 503) << deleted.body;
  EXPECT_EQ(ErrorCode(deleted), "store_busy");
  EXPECT_EQ(deleted.headers.Get("Retry-After"), "1");
  // Reads go on meanwhile, and the store is not reported broken.
  EXPECT_EQ(serve.Call("GET", "/v1/executables/" + stored_key).status, 200);
  EXPECT_EQ(Body(serve.Call("POST", "/v1/compile", testing::kAddModule, kText))["cache"], "hit");
  EXPECT_EQ(Body(serve.Call("GET", "/healthz"))["store"], "ok");

  ASSERT_EQ(lock.Release(), 0);
  // The lock gone: the same compile is stored, the delete works, and the
  // entry acknowledged before the lock is still there until deleted.
  const json again = Body(serve.Call("POST", "/v1/compile", testing::NegateModule(4), kText));
  EXPECT_EQ(again["cache"], "miss");
  EXPECT_EQ(again["stored"], true);
  EXPECT_EQ(Body(serve.Call("POST", "/v1/compile", testing::NegateModule(4), kText))["cache"], "hit");
  EXPECT_EQ(serve.Call("GET", "/v1/executables/" + stored_key).status, 200);
  EXPECT_EQ(serve.Call("DELETE", "/v1/executables/" + stored_key).status, 204);
  EXPECT_EQ(serve.Call("GET", "/v1/executables/" + stored_key).status, 404);
  EXPECT_EQ(Body(serve.Call("GET", "/v1/stats"))["entries"], 1);
  EXPECT_NE(serve.Call("GET", "/metrics").body.find("kiln_cache_not_stored_total{problem=\"busy\"} 1\n"),
            std::string::npos);
}

// Requests to a server on `port`, one connection each.
struct KilnServeCaller {
  uint16_t port;
  RawResponse Call(std::string_view method, std::string_view target, std::string_view body = {},
                   std::string_view headers = {}) const {
    Result<RawHttpClient> client = RawHttpClient::Connect(port, kSlowCompileBound);
    EXPECT_TRUE(client) << client.error().message;
    if (!client) return {};
    Result<RawResponse> response = client->RoundTrip(MakeRequest(method, target, body, headers));
    EXPECT_TRUE(response) << method << " " << target << ": " << response.error().message;
    return response ? std::move(*response) : RawResponse{};
  }
};

// Polls `server`'s /v1/stats until `done` holds of it (60 s at most).
template <typename Server, typename Predicate>
bool WaitForStats(const Server& server, Predicate done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    if (done(Body(server.Call("GET", "/v1/stats")))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ServerFaultsTest, ASaturatedPoolAnswers503WithRetryAfterAndRunsCorrectlyAfterwards) {
  ApiOptions options;
  options.pool_spec = "v5e:1";
  options.pool_queue_capacity = 1;
  // The holders spin until their clients leave, however slow the machine
  // (a sanitizer build at -j2 included): no deadline and no step budget can
  // end them before the refused request is answered.
  options.execute_step_budget = int64_t{1} << 62;
  ServerEnv env(options);
  ASSERT_TRUE(env.ok());
  const std::string spin = Body(env.Call("POST", "/v1/compile", kSpinModule, kText))["key"];
  const std::string add = Body(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  // One run holds the chip and one waits for it: the pool is full.
  std::vector<RawHttpClient> holders;
  for (size_t i = 0; i < 2; ++i) {
    Result<RawHttpClient> holder = RawHttpClient::Connect(env.port(), std::chrono::seconds(60));
    ASSERT_TRUE(holder) << holder.error().message;
    ASSERT_TRUE(holder->Send(MakeRequest("POST", "/v1/executables/" + spin + "/execute?timeout=600s", kSpinInputs, kJson)));
    holders.push_back(std::move(*holder));
    // The first holds the chip before the second is sent (the queue holds
    // one: sent while the first still waits, the second would be refused);
    // the second waits in the queue.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto in_place = [&] {
      const json pool = Body(env.Call("GET", "/v1/pool"));
      return i == 0 ? pool["chips"][0]["busy"] == true && pool["queue_depth"] == 0 : pool["queue_depth"] == 1;
    };
    while (!in_place() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(in_place()) << "holder " << i << ": " << Body(env.Call("GET", "/v1/pool"));
  }
  RawResponse refused = env.Call("POST", "/v1/executables/" + add + "/execute", kAddInputs, kJson);
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(ErrorCode(refused), "pool_saturated");
  EXPECT_EQ(refused.headers.Get("Retry-After"), "1");

  // The holders' clients leave: the running one is cancelled, the waiting
  // one leaves the queue, and the pool is free again.
  for (RawHttpClient& holder : holders) holder.Reset();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  json pool;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pool = Body(env.Call("GET", "/v1/pool"));
  } while ((pool["queue_depth"] != 0 || pool["chips"][0]["busy"] != false) &&
           std::chrono::steady_clock::now() < give_up);
  EXPECT_EQ(pool["queue_depth"], 0) << pool;
  EXPECT_EQ(pool["chips"][0]["busy"], false) << pool;
  EXPECT_EQ(pool["stopped"]["cancelled_total"], 2) << pool;
  // The refused run succeeds as asked, with the right numbers.
  RawResponse ran = env.Call("POST", "/v1/executables/" + add + "/execute", kAddInputs, kJson);
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(Body(ran)["outputs"][0]["data"], json({11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(Body(env.Call("GET", "/v1/pool"))["queue_depth"], 0);
}

TEST(ServerFaultsTest, AClientThatLeavesMidCompileStillGetsTheCompileStoredOnce) {
  KilnServeProcess serve({"--pool", "v5e:1", "--loops", "1", "--compile-threads", "1"});
  ASSERT_TRUE(serve.ok());
  const std::string chain = ChainModule(kSlowChainLength);
  {
    Result<RawHttpClient> leaving = RawHttpClient::Connect(serve.port(), std::chrono::seconds(30));
    ASSERT_TRUE(leaving) << leaving.error().message;
    ASSERT_TRUE(leaving->Send(MakeRequest("POST", "/v1/compile", chain, kText)));
    // The request arrived and its handler is at work: the client goes.
    ASSERT_TRUE(WaitForStats(serve, [](const json& stats) { return stats["compiles"]["requests"] == 1; }));
    leaving->Reset();
  }
  // Another client asks for the same module meanwhile: it shares that
  // compile or finds it stored, but never compiles it again.
  RawResponse second = serve.Call("POST", "/v1/compile", chain, kText, kSlowCompileBound);
  ASSERT_EQ(second.status, 200) << second.body.substr(0, 400);
  ASSERT_TRUE(WaitForStats(serve, [](const json& stats) { return stats["entries"] == 1; }));
  const json stats = Body(serve.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["compiles"]["misses"], 1) << stats;
  EXPECT_EQ(stats["compiles"]["errors"], 0) << stats;
  // Later compiles of the body are hits, and the server is not left holding
  // the departed connection.
  RawResponse later = serve.Call("POST", "/v1/compile", chain, kText);
  ASSERT_EQ(later.status, 200);
  EXPECT_EQ(Body(later)["cache"], "hit");
  EXPECT_EQ(Body(later)["key"], Body(second)["key"]);
  EXPECT_NE(serve.Call("GET", "/metrics").body.find("kiln_http_open_connections 1\n"), std::string::npos);
  // The one compile thread is free for other work.
  EXPECT_EQ(Body(serve.Call("POST", "/v1/compile", testing::kAddModule, kText))["cache"], "miss");
}

TEST(ServerFaultsTest, SigtermWhileCompilingAnswersTheCompileAndExitsWithinTheGrace) {
  char pattern[] = "/tmp/kiln-faults-sigterm-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::filesystem::path dir = pattern;
  // Each process writes its start line to its own folder.
  std::filesystem::create_directories(dir / "first");
  std::filesystem::create_directories(dir / "restarted");
  const std::string args =
      "--listen 127.0.0.1:0 --db " + (dir / "kiln.db").string() + " --pool v5e:1 --loops 1 --access-log off";
  // The grace must outlast the slow compile in any build.
  constexpr auto kGrace = kSlowCompileBound;
  const std::string chain = ChainModule(kSlowChainLength);
  std::string key;
  {
    testing::ServeProcess serve(dir / "first", args + " --shutdown-grace " + std::to_string(kGrace.count()) + "s");
    const uint16_t port = serve.WaitUntilServing();
    ASSERT_NE(port, 0) << serve.Stderr();
    KilnServeCaller caller{port};
    RawResponse compiled;
    std::thread client([&] { compiled = caller.Call("POST", "/v1/compile", chain, kText); });
    ASSERT_TRUE(WaitForStats(caller, [](const json& stats) { return stats["compiles"]["requests"] == 1; }));
    const auto signalled = std::chrono::steady_clock::now();
    kill(serve.pid(), SIGTERM);
    std::optional<int> exit_status = serve.WaitForExit(kGrace + std::chrono::seconds(5));
    const auto exited = std::chrono::steady_clock::now();
    client.join();
    ASSERT_TRUE(exit_status) << "kiln serve still running " << (kGrace + std::chrono::seconds(5)).count()
                             << " s after SIGTERM";
    EXPECT_EQ(*exit_status, 0) << serve.Stderr();
    EXPECT_LT(exited - signalled, kGrace);
    // The compile in flight was answered in full.
    ASSERT_EQ(compiled.status, 200) << compiled.body.substr(0, 400);
    const json answer = Body(compiled);
    EXPECT_EQ(answer["cache"], "miss");
    EXPECT_EQ(answer["stored"], true);
    key = answer["key"];
  }
  // What was acknowledged is there after a restart on the same store.
  {
    testing::ServeProcess serve(dir / "restarted", args);
    const uint16_t port = serve.WaitUntilServing();
    ASSERT_NE(port, 0) << serve.Stderr();
    KilnServeCaller caller{port};
    RawResponse again = caller.Call("POST", "/v1/compile", chain, kText);
    ASSERT_EQ(again.status, 200);
    EXPECT_EQ(Body(again)["cache"], "hit");
    EXPECT_EQ(Body(again)["key"], key);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace kiln::api
