// Recompile diagnostics end to end: a job that compiles one module name as
// several programs (a new batch size, a new learning-rate constant) sees
// them in GET /v1/recompiles, named by what changed, with its clients, and
// in kiln_recompiles_total; another tenant sees none of it.
#include <gtest/gtest.h>

#include "server/api/auth.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::ServerEnv;

using testing::kText;

std::string Step(int batch, const std::string& lr) {
  const std::string shape = "f32[" + std::to_string(batch) + ",128]";
  return "HloModule jit_train_step\nENTRY main {\n  w = " + shape + " parameter(0)\n  lr = f32[] constant(" + lr +
         ")\n  b = " + shape + " broadcast(lr), dimensions={}\n  ROOT m = " + shape + " multiply(w, b)\n}\n";
}

std::string Headers(const std::string& token, const std::string& client = "") {
  std::string out = std::string(kText) + "Authorization: Bearer " + token + "\r\n";
  if (!client.empty()) out += "X-Kiln-Client: " + client + "\r\n";
  return out;
}

ApiOptions TwoTenants() {
  Result<Authenticator> auth = Authenticator::Parse(
      HashToken("alice-token") + " alice compile\n" + HashToken("bob-token") + " bob compile\n" +
          HashToken("ops-token") + " ops admin\n",
      "recompiles-auth");
  EXPECT_TRUE(auth) << auth.error().message;
  ApiOptions options;
  options.auth = std::move(*auth);
  return options;
}

TEST(ServerRecompilesTest, AJobCompilingOneNameAsSeveralProgramsIsToldWhatChanged) {
  ServerEnv env(TwoTenants());
  ASSERT_TRUE(env.ok());
  for (int batch : {16, 17, 33}) {
    auto r = env.Call("POST", "/v1/compile", Step(batch, "0.5"), Headers("alice-token", "job7/host" + std::to_string(batch)));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  // The same program again is a hit, not a recompile.
  ASSERT_EQ(env.Call("POST", "/v1/compile", Step(16, "0.5"), Headers("alice-token")).status, 200);
  ASSERT_EQ(env.Call("POST", "/v1/compile", Step(16, "0.25"), Headers("alice-token")).status, 200);

  auto answer = env.Call("GET", "/v1/recompiles", {}, Headers("alice-token"));
  ASSERT_EQ(answer.status, 200) << answer.body;
  const json report = json::parse(answer.body);
  ASSERT_EQ(report["modules"].size(), 1u) << report.dump(1);
  const json& step = report["modules"][0];
  EXPECT_EQ(step["module"], "jit_train_step");
  EXPECT_EQ(step["keys"], 4);
  EXPECT_EQ(step["compiles"], 4);
  EXPECT_EQ(step["storm"], true);
  EXPECT_EQ(report["storms"], 1);
  EXPECT_EQ(step["clients"], json::array({"job7/host16", "job7/host17", "job7/host33"}));
  ASSERT_EQ(step["changing_dimensions"].size(), 1u);
  EXPECT_EQ(step["changing_dimensions"][0]["values"], json::array({16, 17, 33}));
  ASSERT_EQ(step["changing_constants"].size(), 1u);
  EXPECT_EQ(step["changing_constants"][0]["instruction"], "lr");
  EXPECT_EQ(step["changing_constants"][0]["values"], json::array({"0.5", "0.25"}));
  EXPECT_NE(step["suggestion"].get<std::string>().find("pad it to a few fixed sizes"), std::string::npos);

  auto metrics = env.Call("GET", "/metrics", {}, Headers("ops-token"));
  EXPECT_NE(metrics.body.find("kiln_recompiles_total 3"), std::string::npos);

  // Another tenant sees nothing of alice's.
  auto bob = env.Call("GET", "/v1/recompiles", {}, Headers("bob-token"));
  ASSERT_EQ(bob.status, 200) << bob.body;
  EXPECT_TRUE(json::parse(bob.body)["modules"].empty());
  // Narrowed by name and by how many programs.
  auto named = env.Call("GET", "/v1/recompiles?name=jit_eval", {}, Headers("alice-token"));
  EXPECT_TRUE(json::parse(named.body)["modules"].empty());
  auto many = env.Call("GET", "/v1/recompiles?min_keys=5", {}, Headers("alice-token"));
  EXPECT_TRUE(json::parse(many.body)["modules"].empty());
}

TEST(ServerRecompilesTest, BadParametersAndClientHeadersAreRefused) {
  ServerEnv env(TwoTenants());
  ASSERT_TRUE(env.ok());
  for (const char* bad : {"1", "x", "-3"}) {
    auto r = env.Call("GET", std::string("/v1/recompiles?min_keys=") + bad, {}, Headers("alice-token"));
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("min_keys"), std::string::npos) << r.body;
  }
  EXPECT_EQ(env.Call("GET", "/v1/recompiles?limit=3", {}, Headers("alice-token")).status, 400);
  auto long_client = env.Call("POST", "/v1/compile", Step(8, "1"), Headers("alice-token", std::string(300, 'c')));
  EXPECT_EQ(long_client.status, 400);
  EXPECT_NE(long_client.body.find("X-Kiln-Client"), std::string::npos) << long_client.body;
  EXPECT_EQ(env.Call("GET", "/v1/recompiles").status, 401);
}

}  // namespace
}  // namespace kiln::api
