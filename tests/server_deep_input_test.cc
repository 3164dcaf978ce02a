// The hostile-input report's crash, end to end: a module whose computations
// call one another 10,000 deep, posted to a real `kiln serve` process on
// /v1/compile and /v1/explain, is answered 400 with a JSON message saying
// where and why, and the server keeps serving. A module nested exactly to
// the limit compiles and is explained. `kiln fingerprint` of the deep module
// exits non-zero with the same message.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/deep_modules_test_util.h"
#include "tests/server_test_env.h"

namespace kiln::server {
namespace {

using nlohmann::json;
using testing::RawHttpClient;
using testing::RawResponse;

using testing::kText;

// `kiln serve` on an ephemeral loopback port with a fresh database, as a
// child process; stopped with SIGTERM (then SIGKILL) when destroyed.
class ServeProcess {
 public:
  ServeProcess() {
    char pattern[] = "/tmp/kiln-deep-serve-XXXXXX";
    dir_ = mkdtemp(pattern);
    const std::string out = (dir_ / "serve.out").string();
    const std::string err = (dir_ / "serve.err").string();
    const std::string db = (dir_ / "kiln.db").string();
    pid_ = fork();
    if (pid_ == 0) {
      if (std::freopen(out.c_str(), "w", stdout) == nullptr || std::freopen(err.c_str(), "w", stderr) == nullptr) {
        _exit(127);
      }
      execl(KILN_BINARY, KILN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db.c_str(), "--pool", "v5e:1",
            "--loops", "1", static_cast<char*>(nullptr));
      _exit(127);
    }
    // The start line names the port: "kiln serving on http://127.0.0.1:PORT (...".
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pid_ > 0 && port_ == 0 && std::chrono::steady_clock::now() < deadline && running()) {
      std::ifstream lines(out);
      std::string line;
      if (std::getline(lines, line) && line.find("127.0.0.1:") != std::string::npos) {
        port_ = static_cast<uint16_t>(std::stoi(line.substr(line.find("127.0.0.1:") + 10)));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      if (!WaitFor(std::chrono::seconds(15))) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  bool ok() const { return port_ != 0; }

  // Whether the process is still running (it has not crashed).
  bool running() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      exit_status_ = status;
      return false;
    }
    return true;
  }
  int exit_status() const { return exit_status_; }

  RawResponse Call(std::string_view method, std::string_view target, std::string_view body = {}) const {
    Result<RawHttpClient> client = RawHttpClient::Connect(port_, std::chrono::seconds(60));
    EXPECT_TRUE(client) << client.error().message;
    if (!client) return {};
    Result<RawResponse> response = client->RoundTrip(testing::MakeRequest(method, target, body, kText));
    EXPECT_TRUE(response) << method << " " << target << ": " << response.error().message;
    return response ? std::move(*response) : RawResponse{};
  }

 private:
  bool WaitFor(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!running()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  bool exited_ = false;
  int exit_status_ = 0;
};

// The 400 answer to the deep module: where the chain crosses the limit
// (c{limit} calls c{limit-1}) and why.
void ExpectTooDeep(const RawResponse& response) {
  EXPECT_EQ(response.status, 400) << response.body.substr(0, 500);
  const json body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(body.is_object()) << response.body.substr(0, 500);
  EXPECT_EQ(body["error"]["code"], "hlo_parse_error") << response.body;
  const std::string message = body["error"]["message"];
  EXPECT_NE(message.find(hlo::testing::CallChainTooDeepMessage(hlo::kMaxCallNesting)), std::string::npos)
      << message;
  EXPECT_GT(body["error"]["line"].get<int>(), 1) << response.body;
}

TEST(ServerDeepInputTest, TenThousandDeepCallChainIs400AndTheServerKeepsServing) {
  ServeProcess serve;
  ASSERT_TRUE(serve.ok());
  const std::string deep = hlo::testing::CallChainModule(10'000);
  ASSERT_GT(deep.size(), size_t{500'000});  // the report's module was 777 KB

  ExpectTooDeep(serve.Call("POST", "/v1/compile", deep));
  ExpectTooDeep(serve.Call("POST", "/v1/explain", deep));
  // Again, now that the body may be remembered as bad.
  ExpectTooDeep(serve.Call("POST", "/v1/compile", deep));
  ASSERT_TRUE(serve.running()) << "kiln serve exited with status " << serve.exit_status();

  // Nested exactly to the limit, through while loops: compiled and explained.
  const std::string at_limit = hlo::testing::NestedModule(hlo::testing::Nesting::kWhile, hlo::kMaxCallNesting);
  RawResponse compiled = serve.Call("POST", "/v1/compile", at_limit);
  EXPECT_EQ(compiled.status, 200) << compiled.body;
  EXPECT_EQ(json::parse(compiled.body, nullptr, false)["cache"], "miss") << compiled.body;
  RawResponse explained = serve.Call("POST", "/v1/explain", at_limit);
  EXPECT_EQ(explained.status, 200) << explained.body;
  EXPECT_EQ(json::parse(explained.body, nullptr, false)["cached"], true) << explained.body;

  RawResponse health = serve.Call("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_TRUE(serve.running()) << "kiln serve exited with status " << serve.exit_status();
}

TEST(ServerDeepInputTest, FingerprintOfTheDeepModuleExitsNonZeroWithTheMessage) {
  char pattern[] = "/tmp/kiln-deep-cli-XXXXXX";
  const std::filesystem::path dir = mkdtemp(pattern);
  const std::filesystem::path file = dir / "deep.hlo";
  std::ofstream(file) << hlo::testing::CallChainModule(10'000);
  testing::CommandResult result =
      testing::RunCommand(std::string(KILN_BINARY) + " fingerprint " + file.string() + " 2>&1");
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find(file.string() + ":"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(": " + hlo::testing::CallChainTooDeepMessage(hlo::kMaxCallNesting)), std::string::npos)
      << result.out;
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace kiln::server
