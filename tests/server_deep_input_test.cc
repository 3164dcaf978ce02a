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
#include "tests/kiln_serve_process.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::RawResponse;
using testing::kText;
using testing::KilnServeProcess;

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
  KilnServeProcess serve({"--pool", "v5e:1", "--loops", "1"});
  ASSERT_TRUE(serve.ok());
  const std::string deep = hlo::testing::CallChainModule(10'000);
  ASSERT_GT(deep.size(), size_t{500'000});  // the report's module was 777 KB

  ExpectTooDeep(serve.Call("POST", "/v1/compile", deep, kText));
  ExpectTooDeep(serve.Call("POST", "/v1/explain", deep, kText));
  // Again, now that the body may be remembered as bad.
  ExpectTooDeep(serve.Call("POST", "/v1/compile", deep, kText));
  ASSERT_TRUE(serve.running()) << "kiln serve exited with status " << serve.exit_status().value_or(-1);

  // Nested exactly to the limit, through while loops: compiled and explained.
  const std::string at_limit = hlo::testing::NestedModule(hlo::testing::Nesting::kWhile, hlo::kMaxCallNesting);
  RawResponse compiled = serve.Call("POST", "/v1/compile", at_limit, kText);
  EXPECT_EQ(compiled.status, 200) << compiled.body;
  EXPECT_EQ(json::parse(compiled.body, nullptr, false)["cache"], "miss") << compiled.body;
  RawResponse explained = serve.Call("POST", "/v1/explain", at_limit, kText);
  EXPECT_EQ(explained.status, 200) << explained.body;
  EXPECT_EQ(json::parse(explained.body, nullptr, false)["cached"], true) << explained.body;

  RawResponse health = serve.Call("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_TRUE(serve.running()) << "kiln serve exited with status " << serve.exit_status().value_or(-1);
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
}  // namespace kiln::api
