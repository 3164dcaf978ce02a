// kiln serve end to end: compile (miss, hit, the `kiln fingerprint` key),
// fetch, execute against `kiln run`, explain, stats, metrics and
// single-flight, over real sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cache/sqlite_connection.h"
#include "runtime/io/safetensors.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using testing::ServerEnv;
using nlohmann::json;

using testing::kText;
using testing::kJson;

TEST(ServerE2eTest, CompileMissesThenHitsWithTheFingerprintKey) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto first = env.Call("POST", "/v1/compile", testing::kAddModule, kText);
  ASSERT_EQ(first.status, 200) << first.body;
  json a = ServerEnv::Json(first);
  EXPECT_EQ(a["cache"], "miss");
  EXPECT_EQ(a["fast_path"], false);
  EXPECT_GE(a["kernels"].get<int>(), 1);
  EXPECT_GT(a["estimated_us"].get<double>(), 0);
  EXPECT_EQ(first.headers.Get("X-Kiln-Cache"), "miss");

  auto second = env.Call("POST", "/v1/compile", testing::kAddModule, kText);
  json b = ServerEnv::Json(second);
  EXPECT_EQ(b["cache"], "hit");
  EXPECT_EQ(b["fast_path"], true) << "an identical body skips parsing";
  EXPECT_EQ(b["compile_ms"].get<double>(), 0);
  EXPECT_EQ(b["timings"]["parse_ms"].get<double>(), 0);
  EXPECT_EQ(a["key"], b["key"]);

  // The JSON form of the same module (other whitespace) hits by fingerprint.
  std::string reformatted = std::string(testing::kAddModule) + "\n\n";
  auto third = env.Call("POST", "/v1/compile", json{{"hlo", reformatted}, {"chip", "v5e"}}.dump(), kJson);
  json c = ServerEnv::Json(third);
  EXPECT_EQ(c["cache"], "hit");
  EXPECT_EQ(c["fast_path"], false);
  EXPECT_EQ(c["key"], a["key"]);

  testing::CommandResult printed =
      testing::RunCommand(std::string(KILN_BINARY) + " fingerprint --chip v5e " + env.Write("add.hlo", testing::kAddModule));
  ASSERT_EQ(printed.exit_code, 0);
  EXPECT_EQ(printed.out.substr(0, 32), a["key"].get<std::string>());
}

TEST(ServerE2eTest, FetchHeadDeleteAndReturnExecutable) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto compiled = env.Call("POST", "/v1/compile?return=executable", testing::kAddModule, kText);
  ASSERT_EQ(compiled.status, 200);
  EXPECT_EQ(compiled.headers.Get("Content-Type"), "application/vnd.kiln.executable");
  const std::string key(*compiled.headers.Get("X-Kiln-Key"));
  ASSERT_EQ(key.size(), 32u);
  EXPECT_TRUE(compiled.body.starts_with(std::string_view("KILNEXE\0", 8)));

  auto fetched = env.Call("GET", "/v1/executables/" + key);
  ASSERT_EQ(fetched.status, 200);
  EXPECT_EQ(fetched.body, compiled.body);
  EXPECT_EQ(fetched.headers.Get("ETag"), "\"" + key + "\"");
  EXPECT_EQ(fetched.headers.Get("X-Kiln-Chip"), "v5e");

  auto head = env.Call("HEAD", "/v1/executables/" + key);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers.Get("Content-Length"), std::to_string(compiled.body.size()));

  auto entry = env.Call("GET", "/v1/executables/" + key, "", "Accept: application/json\r\n");
  json metadata = ServerEnv::Json(entry);
  EXPECT_EQ(metadata["key"], key);
  EXPECT_EQ(metadata["raw_bytes"].get<size_t>(), compiled.body.size());
  EXPECT_EQ(metadata["plan"], "heuristic");

  EXPECT_EQ(env.Call("DELETE", "/v1/executables/" + key).status, 204);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key).status, 404);
  EXPECT_EQ(env.Call("HEAD", "/v1/executables/" + key).status, 404);
  EXPECT_EQ(env.Call("DELETE", "/v1/executables/" + key).status, 404);
  // After the delete the same body compiles again.
  EXPECT_EQ(ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["cache"], "miss");
}

TEST(ServerE2eTest, ExecuteWithSafetensorsMatchesKilnRun) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  runtime::io::SafetensorsFile inputs;
  hlo::Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}));
  hlo::Literal y(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}));
  for (int i = 0; i < 6; ++i) {
    x.Set<float>(i, 1.5f * i);
    y.Set<float>(i, 10.0f - i);
  }
  inputs.tensors = {{"0", x}, {"1", y}};
  std::string body = *runtime::io::SerializeSafetensors(inputs);

  auto ran = env.Call("POST", "/v1/executables/" + key + "/execute", body,
                      "Content-Type: application/vnd.safetensors\r\n");
  ASSERT_EQ(ran.status, 200) << ran.body;
  EXPECT_EQ(ran.headers.Get("X-Kiln-Key"), key);
  const std::string device(ran.headers.Get("X-Kiln-Device").value_or(""));
  EXPECT_TRUE(device == "v5e:0" || device == "v5e:1") << device;  // either chip of the v5e:2 pool
  Result<runtime::io::SafetensorsFile> served = runtime::io::ParseSafetensors(ran.body);
  ASSERT_TRUE(served) << served.error().message;
  EXPECT_GT(std::stod(served->metadata.at("kiln.device_us")), 0);
  EXPECT_TRUE(json::parse(served->metadata.at("kiln.kernels")).is_array());

  const std::string outputs = (env.dir() / "run.safetensors").string();
  testing::CommandResult run = testing::RunCommand(
      std::string(KILN_BINARY) + " run " + env.Write("add.hlo", testing::kAddModule) + " --inputs " +
      env.Write("in.safetensors", body) + " --outputs " + outputs + " > /dev/null");
  ASSERT_EQ(run.exit_code, 0);
  Result<runtime::io::SafetensorsFile> expected = runtime::io::ReadSafetensorsFile(outputs);
  ASSERT_TRUE(expected) << expected.error().message;
  ASSERT_EQ(served->tensors.size(), expected->tensors.size());
  for (size_t i = 0; i < expected->tensors.size(); ++i) {
    EXPECT_EQ(served->tensors[i].name, expected->tensors[i].name);
    EXPECT_TRUE(served->tensors[i].value == expected->tensors[i].value) << served->tensors[i].value.ToString();
  }
}

TEST(ServerE2eTest, ExecuteWithJson) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  json request = {{"inputs",
                   {{{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}},
                    {{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {10, 20, 30, 40, 50, 60}}}}}};
  auto ran = env.Call("POST", "/v1/executables/" + key + "/execute", request.dump(), kJson);
  ASSERT_EQ(ran.status, 200) << ran.body;
  json answer = ServerEnv::Json(ran);
  EXPECT_EQ(answer["outputs"][0]["data"], json({11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(answer["outputs"][0]["dtype"], "f32");
  EXPECT_GT(answer["device_us"].get<double>(), 0);
  double sum = 0;
  for (const json& kernel : answer["kernels"]) sum += kernel["us"].get<double>();
  EXPECT_NEAR(sum, answer["device_us"].get<double>(), 1e-6);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["executions"]["requests"], 1);
}

TEST(ServerE2eTest, ExplainNamesTheDifferingParameter) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string cached = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::NegateModule(16), kText))["key"];
  json miss = ServerEnv::Json(env.Call("POST", "/v1/explain", testing::NegateModule(17), kText));
  EXPECT_EQ(miss["cached"], false);
  EXPECT_EQ(miss["nearest"]["key"], cached);
  ASSERT_GE(miss["differences"].size(), 1u);
  EXPECT_EQ(miss["differences"][0]["component"], "parameter 0");
  EXPECT_EQ(miss["differences"][0]["request"], "f32[17,128]");
  EXPECT_EQ(miss["differences"][0]["nearest"], "f32[16,128]");
  EXPECT_NE(miss["message"].get<std::string>().find("f32[16,128]"), std::string::npos);

  json hit = ServerEnv::Json(env.Call("POST", "/v1/explain", testing::NegateModule(16), kText));
  EXPECT_EQ(hit["cached"], true);
  EXPECT_EQ(hit["key"], cached);
  EXPECT_TRUE(hit["differences"].empty());
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["compiles"]["requests"], 1) << "explain never compiles";
}

// The usual recompile: one constant (a learning rate) changed. The server
// keeps each compiled module's text, so explain points at the instruction.
TEST(ServerE2eTest, ExplainPointsAtAChangedConstant) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto step = [](const std::string& lr) {
    return "HloModule step\nENTRY main {\n  w = f32[8,128] parameter(0)\n  lr = f32[] constant(" + lr +
           ")\n  b = f32[8,128] broadcast(lr), dimensions={}\n  ROOT m = f32[8,128] multiply(w, b)\n}\n";
  };
  const std::string cached = ServerEnv::Json(env.Call("POST", "/v1/compile", step("0.5"), kText))["key"];
  json miss = ServerEnv::Json(env.Call("POST", "/v1/explain", step("0.25"), kText));
  EXPECT_EQ(miss["cached"], false);
  EXPECT_EQ(miss["nearest"]["key"], cached);
  EXPECT_EQ(miss["changes_total"], 1);
  ASSERT_EQ(miss["changes"].size(), 1u);
  EXPECT_EQ(miss["changes"][0]["line"], 4);
  EXPECT_EQ(miss["changes"][0]["request"], "%lr = f32[] constant(0.25)");
  EXPECT_EQ(miss["changes"][0]["cached"], "%lr = f32[] constant(0.5)");
  EXPECT_EQ(miss["message"], "miss: %lr (line 4) is constant(0.25) here, constant(0.5) in the cached module");
  json other_chip = ServerEnv::Json(env.Call("POST", "/v1/explain?chip=v6e", step("0.5"), kText));
  EXPECT_EQ(other_chip["message"], "miss: this module is cached for v5e, not v6e");
}

// A plan-none compile is stored as plan none (it used to be stored as
// heuristic, with only its options saying none), and listed as such.
TEST(ServerE2eTest, PlanNoneEntriesAreStoredAndListedAsNone) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  json none = ServerEnv::Json(env.Call("POST", "/v1/compile?plan=none&return=summary", testing::kAddModule, kText));
  ASSERT_TRUE(none.contains("key")) << none.dump();
  EXPECT_EQ(env.Call("POST", "/v1/compile?return=summary", testing::kAddModule, kText).status, 200);

  json listed = ServerEnv::Json(env.Call("GET", "/v1/entries?plan=none"));
  ASSERT_EQ(listed["entries"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["entries"][0]["key"], none["key"]);
  EXPECT_EQ(listed["entries"][0]["plan"], "none");
  json heuristic = ServerEnv::Json(env.Call("GET", "/v1/entries?plan=heuristic"));
  ASSERT_EQ(heuristic["entries"].size(), 1u) << heuristic.dump();
  EXPECT_NE(heuristic["entries"][0]["key"], none["key"]);

  auto db = cache::Connection::Open((env.dir() / "kiln.db").string(), {.read_only = true});
  ASSERT_TRUE(db) << db.error().ToString();
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM entries WHERE plan_kind = 'none'"), 1);
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM entries WHERE plan_kind = 'heuristic'"), 1);
}

TEST(ServerE2eTest, StatsEntriesPoolAndMetrics) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  env.Call("POST", "/v1/compile", testing::kAddModule, kText);
  env.Call("POST", "/v1/compile", testing::kAddModule, kText);
  env.Call("POST", "/v1/compile", testing::NegateModule(8), kText);
  json stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["entries"], 2);
  EXPECT_EQ(stats["compiles"]["requests"], 3);
  EXPECT_EQ(stats["compiles"]["misses"], 2);
  EXPECT_EQ(stats["compiles"]["hits"], 1);
  EXPECT_EQ(stats["compiles"]["fast_path"], 1);
  EXPECT_GT(stats["compiles"]["compile_ms_saved"].get<double>(), 0);
  EXPECT_EQ(stats["by_chip"][0]["chip"], "v5e");

  json page = ServerEnv::Json(env.Call("GET", "/v1/entries?limit=1"));
  ASSERT_EQ(page["entries"].size(), 1u);
  ASSERT_TRUE(page["next_cursor"].is_string());
  json rest = ServerEnv::Json(env.Call("GET", "/v1/entries?limit=1&cursor=" + page["next_cursor"].get<std::string>()));
  ASSERT_EQ(rest["entries"].size(), 1u);
  EXPECT_NE(rest["entries"][0]["key"], page["entries"][0]["key"]);
  EXPECT_TRUE(rest["next_cursor"].is_null());
  EXPECT_EQ(env.Call("GET", "/v1/entries?sort=hits&cursor=" + page["next_cursor"].get<std::string>()).status, 400);
  EXPECT_TRUE(ServerEnv::Json(env.Call("GET", "/v1/entries?chip=v4"))["entries"].empty());

  json pool = ServerEnv::Json(env.Call("GET", "/v1/pool"));
  ASSERT_EQ(pool["chips"].size(), 2u);
  EXPECT_EQ(pool["chips"][1]["id"], "v5e:1");
  EXPECT_EQ(pool["kinds"][0]["chips"], 2);

  auto metrics = env.Call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("kiln_cache_lookups_total{result=\"hit\"} 1\n"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("kiln_cache_lookups_total{result=\"miss\"} 2\n"), std::string::npos);
  EXPECT_NE(metrics.body.find("kiln_compile_duration_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(metrics.body.find("kiln_cache_entries 2\n"), std::string::npos);
  EXPECT_NE(metrics.body.find("kiln_http_requests_total{route=\"/v1/compile\",method=\"POST\",status=\"200\"} 3\n"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("kiln_pool_queue_depth{kind=\"v5e\"} 0\n"), std::string::npos);
}

TEST(ServerE2eTest, HundredConcurrentIdenticalCompilesCompileOnce) {
  ApiOptions options;
  options.compile_threads = 2;
  http::HttpServerOptions http_options = ServerEnv::DefaultHttpOptions();
  http_options.worker_threads = 8;
  ServerEnv env(options, http_options);
  ASSERT_TRUE(env.ok());
  // Big enough that the compile outlasts the requests' arrival.
  std::string module = R"(HloModule wide
ENTRY main {
  a = f32[512,1024] parameter(0)
  b = f32[1024,512] parameter(1)
  d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[512,512] exponential(d)
  ROOT t = f32[512,512] tanh(e)
}
)";
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  std::mutex mu;
  std::set<std::string> keys;
  std::map<std::string, int> outcomes;
  for (int i = 0; i < 100; ++i) {
    threads.emplace_back([&] {
      auto response = env.Call("POST", "/v1/compile", module, kText);
      json answer = ServerEnv::Json(response);
      if (response.status != 200) return;
      ok.fetch_add(1);
      std::lock_guard lock(mu);
      keys.insert(answer["key"].get<std::string>());
      outcomes[answer["cache"].get<std::string>()] += 1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 100);
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_EQ(outcomes["miss"], 1);
  EXPECT_EQ(outcomes["miss"] + outcomes["joined"] + outcomes["hit"], 100);
  json stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["compiles"]["misses"], 1);
  auto metrics = env.Call("GET", "/metrics");
  EXPECT_NE(metrics.body.find("kiln_compile_duration_seconds_count 1\n"), std::string::npos) << "exactly one compile";
}

}  // namespace
}  // namespace kiln::api
