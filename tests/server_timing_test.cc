// Timing over HTTP: POST /v1/executables/{key}/time answers the simulated
// device time and per-kernel profile without values (the same figures an
// execute reports), GET .../trace the Chrome/Perfetto trace; a program
// whose loop trip count depends on data is refused with the reason.
#include <gtest/gtest.h>

#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::ServerEnv;

using testing::kText;
using testing::kJson;

TEST(ServerTimingTest, TimeAnswersTheProfileAnExecuteReportsWithoutValues) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  auto timed = env.Call("POST", "/v1/executables/" + key + "/time");
  ASSERT_EQ(timed.status, 200) << timed.body;
  const json profile = json::parse(timed.body);
  EXPECT_EQ(profile["key"], key);
  EXPECT_EQ(profile["chip"], "v5e");
  ASSERT_FALSE(profile["kernels"].empty());
  EXPECT_GT(profile["device_us"].get<double>(), 0);
  EXPECT_FALSE(profile.contains("outputs"));

  auto ran = env.Call("POST", "/v1/executables/" + key + "/execute", std::string(testing::kAddInputs), kJson);
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_NEAR(json::parse(ran.body)["device_us"].get<double>(), profile["device_us"].get<double>(), 1e-9);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["executions"]["requests"], 1) << "timing is not a run";

  auto trace = env.Call("GET", "/v1/executables/" + key + "/trace");
  ASSERT_EQ(trace.status, 200) << trace.body;
  size_t kernel_events = 0;
  const json events = json::parse(trace.body)["traceEvents"];
  for (const json& event : events) {
    kernel_events += event.value("ph", "") == "X" ? 1 : 0;
  }
  EXPECT_EQ(kernel_events, profile["kernels"].size()) << trace.body;
}

TEST(ServerTimingTest, UnknownKeysAndDataDependentLoopsAreRefused) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto missing = env.Call("POST", "/v1/executables/0123456789abcdef0123456789abcdef/time");
  EXPECT_EQ(missing.status, 404) << missing.body;
  EXPECT_EQ(env.Call("GET", "/v1/executables/nothex/trace").status, 400);
  // while(true) has no static trip count: timing needs its values.
  const std::string spin = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kSpinModule, kText))["key"];
  auto refused = env.Call("POST", "/v1/executables/" + spin + "/time");
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(ServerEnv::Json(refused)["error"]["code"], "timing_unavailable");
  EXPECT_EQ(env.Call("POST", "/v1/executables/" + spin + "/time?x=1").status, 400);
}

}  // namespace
}  // namespace kiln::api
