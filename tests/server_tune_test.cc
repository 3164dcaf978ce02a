// Autotuning jobs over HTTP: POST /v1/tune, GET and DELETE /v1/tune/{id},
// the tuned entry served under the same key, tuning that waits for
// executes, tenants, background tuning of misses and the metrics.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "cache/cache_store.h"
#include "server/api/auth.h"
#include "tests/server_test_env.h"
#include "tests/tunable_module.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::ServerEnv;

using testing::kJson;

constexpr const char* kTunable = kiln::testing::kTunableModule;

using testing::Bearer;

json Compile(const ServerEnv& env, std::string_view headers = {}) {
  auto response = env.Call("POST", "/v1/compile", json{{"hlo", kTunable}, {"chip", "v5e"}}.dump(),
                           std::string(kJson) + std::string(headers));
  EXPECT_EQ(response.status, 200) << response.body;
  return ServerEnv::Json(response);
}

json TuneBody(json extra) {
  json body = {{"hlo", kTunable}, {"chip", "v5e"}, {"max_trials", 12}, {"seed", 5}};
  for (auto& [field, value] : extra.items()) body[field] = value;
  return body;
}

// GET /v1/tune/{id} until `done(job)` (at most about 60 s).
json PollJob(const ServerEnv& env, const std::string& id, const std::function<bool(const json&)>& done,
             std::string_view headers = {}) {
  json job;
  for (int i = 0; i < 1200; ++i) {
    auto response = env.Call("GET", "/v1/tune/" + id, "", headers);
    EXPECT_EQ(response.status, 200) << response.body;
    job = ServerEnv::Json(response);
    if (response.status != 200 || done(job)) return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "job " << id << " did not get there: " << job.dump();
  return job;
}

bool Ended(const json& job) {
  const std::string state = job.value("state", "");
  return state == "done" || state == "failed" || state == "cancelled";
}

// The value of one series of /metrics ("name{labels}"), or -1 when absent.
double Metric(const ServerEnv& env, const std::string& series) {
  const std::string text = env.Call("GET", "/metrics").body;
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::strtod(text.c_str() + at + series.size() + 2, nullptr);
}

TEST(ServerTuneTest, ADoneJobSwapsTheTunedExecutableInUnderTheSameKey) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  json compiled = Compile(env);
  ASSERT_EQ(compiled["plan"], "heuristic");
  const std::string key = compiled["key"];
  const double heuristic_compile_ms = compiled["entry_compile_ms"];
  using testing::kText;
  // A text body, answered from memory on the loop thread once seen.
  ASSERT_EQ(env.Call("POST", "/v1/compile", kTunable, kText).status, 200);
  EXPECT_EQ(ServerEnv::Json(env.Call("POST", "/v1/compile", kTunable, kText))["fast_path"], true);

  auto started = env.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson);
  ASSERT_EQ(started.status, 202) << started.body;
  json job = ServerEnv::Json(started);
  const std::string id = job["id"];
  EXPECT_EQ(started.headers.Get("Location"), "/v1/tune/" + id);
  EXPECT_EQ(job["key"], key);
  EXPECT_EQ(job["max_trials"], 12);
  EXPECT_TRUE(job["state"] == "queued" || job["state"] == "running") << job.dump();

  json done = PollJob(env, id, Ended);
  ASSERT_EQ(done["state"], "done") << done.dump();
  EXPECT_TRUE(done["accepted"].get<bool>()) << done["decision"];
  EXPECT_TRUE(done["stored"].get<bool>()) << done["decision"];
  EXPECT_GT(done["trials_done"].get<int>(), 0);
  EXPECT_LE(done["trials_done"].get<int>(), 12);
  const double tuned_us = done["tuned_us"].get<double>();
  EXPECT_LT(tuned_us, done["heuristic_us"].get<double>());
  EXPECT_EQ(done["best_us"].get<double>(), tuned_us);
  EXPECT_FALSE(done["finished"].is_null());
  // The job is listed, and only for its own tenant.
  json listed = ServerEnv::Json(env.Call("GET", "/v1/tune"))["jobs"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["id"], id);
  EXPECT_EQ(listed[0]["state"], "done");
  EXPECT_EQ(env.Call("GET", "/v1/tune?limit=0").status, 400);

  // The same module compiles to the tuned entry, by fingerprint and by the
  // body seen before (the hit path's memory was refreshed).
  for (int i = 0; i < 2; ++i) {
    json again = Compile(env);
    EXPECT_EQ(again["cache"], "hit");
    EXPECT_EQ(again["key"], key);
    EXPECT_EQ(again["plan"], "tuned");
    EXPECT_NEAR(again["estimated_us"].get<double>(), tuned_us, tuned_us * 1e-9);
  }
  for (int i = 0; i < 2; ++i) {
    json text = ServerEnv::Json(env.Call("POST", "/v1/compile", kTunable, kText));
    EXPECT_EQ(text["plan"], "tuned") << "the hit path serves the tuned entry";
    EXPECT_NEAR(text["estimated_us"].get<double>(), tuned_us, tuned_us * 1e-9);
  }
  auto entry = env.Call("GET", "/v1/executables/" + key, "", "Accept: application/json\r\n");
  EXPECT_EQ(ServerEnv::Json(entry)["plan"], "tuned") << entry.body;
  // Compile and tuning time apart: a hit on the tuned entry saves the
  // compile it replaced, not the tuning run (a probe saw one hit "save"
  // 5.1 s for a module that compiles in 3 ms).
  EXPECT_EQ(ServerEnv::Json(entry)["compile_ms"], heuristic_compile_ms) << entry.body;
  EXPECT_GT(ServerEnv::Json(entry)["tune_ms"].get<double>(), heuristic_compile_ms) << entry.body;
  EXPECT_EQ(Compile(env)["entry_compile_ms"], heuristic_compile_ms);
  const json stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_GT(stats["tuning"]["tune_ms_total"].get<double>(), 0) << stats.dump();
  EXPECT_EQ(stats["tuning"]["jobs_done"], 1);
  EXPECT_LT(stats["compiles"]["compile_ms_saved"].get<double>(), 10 * heuristic_compile_ms + 1) << stats.dump();

  // Finished: nothing to cancel.
  auto cancel = env.Call("DELETE", "/v1/tune/" + id);
  EXPECT_EQ(cancel.status, 409);
  EXPECT_EQ(ServerEnv::Json(cancel)["error"]["code"], "job_finished");

  EXPECT_EQ(Metric(env, R"(kiln_tune_jobs_ended_total{state="done"})"), 1);
  EXPECT_EQ(Metric(env, R"(kiln_tune_trials_total)"), done["trials_done"].get<double>());
  EXPECT_NEAR(Metric(env, R"(kiln_tune_device_seconds_saved_total)"),
              (done["heuristic_us"].get<double>() - tuned_us) * 1e-6, 1e-9);
  EXPECT_GT(Metric(env, R"(kiln_tuning_records{tenant="default"})"), 0);
  EXPECT_EQ(Metric(env, R"(kiln_tune_jobs{state="running"})"), 0);

  // Records deleted by another process (kiln inspect) read 0, not the last count.
  cache::CacheStoreOptions other_options;
  other_options.path = (env.dir() / "kiln.db").string();
  auto other = cache::CacheStore::Open(other_options);
  ASSERT_TRUE(other) << other.error().ToString();
  ASSERT_TRUE((*other)->tuning_records().DeleteTenant("default"));
  EXPECT_EQ(Metric(env, R"(kiln_tuning_records{tenant="default"})"), 0);
}

// The store keeps each entry's HLO text: a tuning job for a stored entry
// needs only its key, and the job does not carry the text while it waits.
TEST(ServerTuneTest, AKeyAloneTunesAStoredEntryFromItsOwnText) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = Compile(env)["key"];
  auto started = env.Call("POST", "/v1/tune", json{{"key", key}, {"max_trials", 12}, {"seed", 5}}.dump(), kJson);
  ASSERT_EQ(started.status, 202) << started.body;
  json done = PollJob(env, ServerEnv::Json(started)["id"], Ended);
  ASSERT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(done["key"], key);
  EXPECT_TRUE(done["stored"].get<bool>()) << done["decision"];
  EXPECT_EQ(Compile(env)["plan"], "tuned");
}

TEST(ServerTuneTest, BadInputGetsItsOwn4xx) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  struct Case {
    json body;
    int status;
    std::string code;
  };
  const std::vector<Case> before_compile = {
      {TuneBody({}), 404, "not_found"},  // not compiled yet
      {json{{"key", "8509a329c0908e1bde360d54663719a7"}}, 404, "not_found"},
  };
  for (const Case& c : before_compile) {
    auto response = env.Call("POST", "/v1/tune", c.body.dump(), kJson);
    EXPECT_EQ(response.status, c.status) << c.body.dump() << ": " << response.body;
    EXPECT_EQ(ServerEnv::Json(response)["error"]["code"], c.code) << response.body;
  }
  const std::string key = Compile(env)["key"];
  const std::vector<Case> cases = {
      {TuneBody({{"max_trials", 0}}), 400, "invalid_budget"},
      {TuneBody({{"max_trials", -2}}), 400, "invalid_budget"},
      {TuneBody({{"max_trials", 100000000}}), 400, "invalid_budget"},
      {TuneBody({{"time_budget_s", 0}}), 400, "invalid_budget"},
      {TuneBody({{"time_budget_s", 1e9}}), 400, "invalid_budget"},
      {TuneBody({{"chip", "a100"}}), 400, "unknown_chip"},
      {TuneBody({{"chip", "v6e"}}), 404, "not_found"},  // compiled for v5e only
      {TuneBody({{"key", "00000000000000000000000000000000"}}), 400, "key_mismatch"},
      {TuneBody({{"key", "nope"}}), 400, "invalid_key"},
      {TuneBody({{"hlo", "HloModule broken\nENTRY {"}}), 400, "hlo_parse_error"},
      {TuneBody({{"options", {{"plan", "none"}}}}), 400, "invalid_options"},
      {json{{"chip", "v5e"}}, 400, "invalid_json"},
  };
  for (const Case& c : cases) {
    auto response = env.Call("POST", "/v1/tune", c.body.dump(), kJson);
    EXPECT_EQ(response.status, c.status) << c.body.dump() << ": " << response.body;
    EXPECT_EQ(ServerEnv::Json(response)["error"]["code"], c.code) << response.body;
  }
  EXPECT_EQ(env.Call("POST", "/v1/tune", "max_trials=3", "Content-Type: text/plain\r\n").status, 415);
  auto bad_id = env.Call("GET", "/v1/tune/XYZ");
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_EQ(ServerEnv::Json(bad_id)["error"]["code"], "invalid_job_id");
  EXPECT_EQ(env.Call("GET", "/v1/tune/0123456789abcdef").status, 404);
  EXPECT_EQ(env.Call("DELETE", "/v1/tune/0123456789abcdef").status, 404);

  http::HttpServerOptions small = ServerEnv::DefaultHttpOptions();
  small.max_body_bytes = 256;  // the body is about 500 bytes
  ServerEnv tight({}, small);
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson).status, 413);
}

TEST(ServerTuneTest, TuningWaitsForExecutesAndACancelledJobLeavesTheEntryAlone) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = Compile(env)["key"];
  auto spin = env.Call("POST", "/v1/compile", testing::kSpinModule, "Content-Type: text/plain\r\n");
  ASSERT_EQ(spin.status, 200);
  const std::string spin_key(*spin.headers.Get("X-Kiln-Key"));

  // A run that keeps a chip busy for 3 s: no tuning measures meanwhile.
  int spin_status = 0;
  std::thread run([&] {
    spin_status = env.Call("POST", "/v1/executables/" + spin_key + "/execute?timeout=3s", testing::kSpinInputs, kJson)
                      .status;
  });
  for (int i = 0; i < 200 && ServerEnv::Json(env.Call("GET", "/v1/pool"))["chips"][0]["busy"] != true &&
                  ServerEnv::Json(env.Call("GET", "/v1/pool"))["chips"][1]["busy"] != true;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto started = env.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson);
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string id = ServerEnv::Json(started)["id"];
  json waiting = PollJob(env, id, [](const json& j) { return j["waiting_for_executes"] == true || Ended(j); });
  EXPECT_EQ(waiting["state"], "running");
  EXPECT_EQ(waiting["trials_done"], 0) << "no trial while the run goes on";

  // A second POST for the key answers the same job.
  auto again = env.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(ServerEnv::Json(again)["id"], id);
  auto by_key = env.Call("POST", "/v1/tune", json{{"key", key}}.dump(), kJson);
  EXPECT_EQ(by_key.status, 200);
  EXPECT_EQ(ServerEnv::Json(by_key)["id"], id);

  auto cancel = env.Call("DELETE", "/v1/tune/" + id);
  EXPECT_EQ(cancel.status, 202) << cancel.body;
  EXPECT_TRUE(ServerEnv::Json(cancel)["cancel_requested"].get<bool>());
  json cancelled = PollJob(env, id, Ended);
  EXPECT_EQ(cancelled["state"], "cancelled") << cancelled.dump();
  EXPECT_EQ(cancelled["stored"], false);
  EXPECT_EQ(Compile(env)["plan"], "heuristic") << "nothing was swapped in";

  // A new job waits for the run, then tunes.
  auto second = env.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson);
  ASSERT_EQ(second.status, 202) << second.body;
  run.join();
  EXPECT_EQ(spin_status, 504);
  json done = PollJob(env, ServerEnv::Json(second)["id"], Ended);
  EXPECT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(Compile(env)["plan"], "tuned");
  EXPECT_EQ(Metric(env, R"(kiln_tune_jobs_ended_total{state="cancelled"})"), 1);
}

TEST(ServerTuneTest, AnotherTenantCannotSeeCancelOrTuneAJob) {
  std::string file = HashToken("alice-token") + " alice compile\n" + HashToken("bob-token") + " bob compile\n";
  Result<Authenticator> auth = Authenticator::Parse(file, "test-auth");
  ASSERT_TRUE(auth);
  ApiOptions options;
  options.auth = std::move(*auth);
  ServerEnv env(std::move(options));
  ASSERT_TRUE(env.ok());
  const std::string alice = Bearer("alice-token"), bob = Bearer("bob-token");
  const std::string key = Compile(env, alice)["key"];
  auto started = env.Call("POST", "/v1/tune", TuneBody({}).dump(), std::string(kJson) + alice);
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string id = ServerEnv::Json(started)["id"];

  EXPECT_EQ(env.Call("GET", "/v1/tune/" + id, "", bob).status, 404);
  EXPECT_EQ(env.Call("DELETE", "/v1/tune/" + id, "", bob).status, 404);
  EXPECT_EQ(env.Call("POST", "/v1/tune", TuneBody({}).dump(), std::string(kJson) + bob).status, 404)
      << "alice's entry is not bob's";
  EXPECT_EQ(env.Call("POST", "/v1/tune", json{{"key", key}}.dump(), std::string(kJson) + bob).status, 404);
  EXPECT_EQ(env.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson).status, 401);

  json done = PollJob(env, id, Ended, alice);
  EXPECT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(Compile(env, bob)["plan"], "heuristic") << "bob's own entry is untouched";
  EXPECT_EQ(Compile(env, alice)["plan"], "tuned");
}

TEST(ServerTuneTest, BackgroundTuningQueuesEveryMissAndCountsWhatItDrops) {
  ApiOptions options;
  options.tune_in_background_s = 5;
  ServerEnv env(std::move(options));
  ASSERT_TRUE(env.ok());
  json miss = Compile(env);
  ASSERT_EQ(miss["cache"], "miss");
  EXPECT_EQ(miss["plan"], "heuristic") << "the miss is answered before tuning";
  for (int i = 0; i < 1200 && Metric(env, R"(kiln_tune_jobs_ended_total{state="done"})") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(Metric(env, R"(kiln_tune_jobs_ended_total{state="done"})"), 1);
  EXPECT_EQ(Compile(env)["plan"], "tuned");
  EXPECT_EQ(Metric(env, "kiln_tune_background_dropped_total"), 0);

  ApiOptions full;
  full.tune_in_background_s = 5;
  full.tune_queue_capacity = 0;
  ServerEnv refusing(std::move(full));
  ASSERT_TRUE(refusing.ok());
  EXPECT_EQ(Compile(refusing)["cache"], "miss");
  for (int i = 0; i < 200 && Metric(refusing, "kiln_tune_background_dropped_total") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Metric(refusing, "kiln_tune_background_dropped_total"), 1);
  auto queue_full = refusing.Call("POST", "/v1/tune", TuneBody({}).dump(), kJson);
  EXPECT_EQ(queue_full.status, 503);
  EXPECT_EQ(ServerEnv::Json(queue_full)["error"]["code"], "tune_queue_full");
  EXPECT_TRUE(queue_full.headers.Get("Retry-After"));
}

}  // namespace
}  // namespace kiln::api
