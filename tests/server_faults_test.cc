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
#include "tests/server_test_env.h"

namespace kiln::server {
namespace {

using http::testing::RawResponse;
using nlohmann::json;
using testing::KilnServeProcess;

constexpr std::string_view kText = "Content-Type: text/plain\r\n";

json Body(const RawResponse& response) { return json::parse(response.body, nullptr, /*allow_exceptions=*/false); }

std::string ErrorCode(const RawResponse& response) {
  const json body = Body(response);
  return body.is_object() && body.contains("error") ? body["error"].value("code", "") : "";
}

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

}  // namespace
}  // namespace kiln::server
