// Tuning once per fleet: real `kiln serve` processes sharing a real
// redis-server on a free loopback port (skipped only when redis-server is
// not installed; scripts/setup.sh installs it). A tune request for one
// entry sent to every server runs one tuning in all, every server lists
// it, and the job of a server killed mid-tuning is taken over.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cache/shared/testing/redis_server.h"
#include "tests/kiln_serve_process.h"

namespace kiln::api::testing {
namespace {

using namespace std::chrono_literals;
using cache::shared::testing::RedisServer;
using json = nlohmann::json;

// A module whose tuning takes about a second (its output check evaluates
// a 2048x4096x2048 dot), so requests sent to every server overlap it;
// `seed` changes the key, not the work.
std::string FleetTuneModule(int seed) {
  return "HloModule fleet_tunable\nENTRY e {\n"
         "  x = f32[2048,4096] parameter(0)\n"
         "  w = f32[4096,2048] parameter(1)\n"
         "  bias = f32[2048] parameter(2)\n"
         "  k = f32[] constant(" + std::to_string(seed) + ")\n"
         "  kb = f32[2048,2048] broadcast(k), dimensions={}\n"
         "  s = f32[2048,4096] sine(x)\n"
         "  m = f32[2048,4096] multiply(s, x)\n"
         "  d = f32[2048,2048] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  bb = f32[2048,2048] broadcast(bias), dimensions={1}\n"
         "  o = f32[2048,2048] add(d, bb)\n"
         "  o2 = f32[2048,2048] add(o, kb)\n"
         "  ROOT r = f32[2048,2048] logistic(o2)\n}\n";
}

// A 1 s lease (taken over a second after its holder dies) and a 5 s Redis
// deadline (a loaded machine's exchange may pass 500 ms).
std::vector<std::string> FleetTuneFlags(const RedisServer& redis, std::vector<std::string> more = {}) {
  std::vector<std::string> flags = {"--shared", redis.url(), "--shared-lease", "1s", "--shared-timeout", "5s"};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// The name a server's jobs carry: this host and its port.
std::string FleetTuneServerName(const KilnServeProcess& server) {
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + ":" + std::to_string(server.port());
}

json FleetTuneJson(const http::testing::RawResponse& response) {
  json body = json::parse(response.body, nullptr, false);
  return body.is_discarded() ? json::object() : body;
}

void FleetTuneCompile(const KilnServeProcess& server, const std::string& module) {
  http::testing::RawResponse response = server.Call("POST", "/v1/compile", module, "Content-Type: text/plain\r\n");
  EXPECT_EQ(response.status, 200) << response.body.substr(0, 300);
}

http::testing::RawResponse FleetTuneStart(const KilnServeProcess& server, const std::string& module) {
  const json request = {{"hlo", module}, {"chip", "v5e"}, {"max_trials", 24}, {"seed", 3}};
  return server.Call("POST", "/v1/tune", request.dump(), "Content-Type: application/json\r\n");
}

// The sum of every series of metric `name` on the server's /metrics.
double FleetTuneMetricSum(const KilnServeProcess& server, const std::string& name) {
  const http::testing::RawResponse response = server.Call("GET", "/metrics");
  EXPECT_EQ(response.status, 200);
  std::istringstream lines(response.body);
  double sum = 0;
  bool found = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) != 0 && line.rfind(name + "{", 0) != 0) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
    found = true;
  }
  EXPECT_TRUE(found) << name << " is not in /metrics";
  return sum;
}

// The job `id` in the server's GET /v1/tune listing (null when absent).
json FleetTuneListed(const KilnServeProcess& server, const std::string& id) {
  json listing = FleetTuneJson(server.Call("GET", "/v1/tune"));
  for (const json& job : listing.value("jobs", json::array()))
    if (job.value("id", "") == id) return job;
  return nullptr;
}

// Polls GET /v1/tune/{id} until the job is in one of `states` (or `limit`
// passes); the last answer.
json FleetTuneWaitFor(const KilnServeProcess& server, const std::string& id, const std::set<std::string>& states,
                      std::chrono::milliseconds limit = 30s) {
  json job;
  for (const auto give_up = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < give_up;
       std::this_thread::sleep_for(10ms)) {
    job = FleetTuneJson(server.Call("GET", "/v1/tune/" + id));
    if (states.contains(job.value("state", ""))) break;
  }
  return job;
}

#define FLEET_TUNE_REQUIRE_REDIS()                                                                    \
  if (!RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)"

TEST(ServerFleetTuneTest, ATuneRequestSentToEveryServerRunsOneTuningThatEveryServerLists) {
  FLEET_TUNE_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(FleetTuneFlags(redis)), b(FleetTuneFlags(redis)), c(FleetTuneFlags(redis));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const std::vector<const KilnServeProcess*> servers = {&a, &b, &c};
  const std::string module = FleetTuneModule(1);
  for (const KilnServeProcess* server : servers) FleetTuneCompile(*server, module);

  // The three requests at once: one server queues the job, the other two
  // answer it as a known job (200) naming that server.
  std::mutex mu;
  std::vector<std::pair<int, json>> answers;
  std::vector<std::thread> senders;
  for (const KilnServeProcess* server : servers) {
    senders.emplace_back([&, server] {
      http::testing::RawResponse response = FleetTuneStart(*server, module);
      std::lock_guard lock(mu);
      answers.emplace_back(response.status, FleetTuneJson(response));
    });
  }
  for (std::thread& sender : senders) sender.join();
  std::multiset<int> statuses;
  std::set<std::string> ids, names;
  for (const auto& [status, job] : answers) {
    statuses.insert(status);
    ids.insert(job.value("id", ""));
    names.insert(job.value("server", ""));
  }
  EXPECT_EQ(statuses, (std::multiset<int>{200, 200, 202})) << json(answers).dump();
  ASSERT_EQ(ids.size(), 1u) << json(answers).dump();
  ASSERT_EQ(names.size(), 1u) << json(answers).dump();
  const std::string id = *ids.begin(), runner_name = *names.begin();
  const KilnServeProcess* runner = nullptr;
  for (const KilnServeProcess* server : servers)
    if (FleetTuneServerName(*server) == runner_name) runner = server;
  ASSERT_NE(runner, nullptr) << runner_name << " is none of the servers";

  // While it runs, every server lists it, with the server that runs it.
  for (const KilnServeProcess* server : servers) {
    json listed = FleetTuneListed(*server, id);
    ASSERT_TRUE(listed.is_object()) << "server " << server->port() << " does not list job " << id << ": "
                                    << server->Call("GET", "/v1/tune").body;
    EXPECT_EQ(listed.value("server", ""), runner_name);
    EXPECT_TRUE(listed.value("state", "") == "queued" || listed.value("state", "") == "running") << listed.dump();
    // And answers it by id.
    EXPECT_EQ(FleetTuneJson(server->Call("GET", "/v1/tune/" + id)).value("server", ""), runner_name);
  }

  const json done = FleetTuneWaitFor(*runner, id, {"done", "failed", "cancelled"});
  ASSERT_EQ(done.value("state", ""), "done") << done.dump();
  double runs = 0, skipped = 0;
  for (const KilnServeProcess* server : servers) {
    runs += FleetTuneMetricSum(*server, "kiln_tune_jobs_ended_total");
    skipped += FleetTuneMetricSum(*server, "kiln_tune_fleet_skipped_total");
  }
  EXPECT_EQ(runs, 1) << "tuning runs in the fleet";
  EXPECT_EQ(skipped, 2);
}

TEST(ServerFleetTuneTest, BackgroundTuningOnEveryServerAndRequestsToEachRunOneTuning) {
  FLEET_TUNE_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  const std::vector<std::string> flags = FleetTuneFlags(redis, {"--tune-in-background", "30s"});
  KilnServeProcess a(flags), b(flags), c(flags);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const std::vector<const KilnServeProcess*> servers = {&a, &b, &c};
  const std::string module = FleetTuneModule(2);
  // a compiles (and queues its background tuning); b and c get the entry
  // from Redis.
  for (const KilnServeProcess* server : servers) FleetTuneCompile(*server, module);
  for (const KilnServeProcess* server : servers) {
    const http::testing::RawResponse started = FleetTuneStart(*server, module);
    EXPECT_TRUE(started.status == 200 || started.status == 202) << started.body;
  }
  // Until no server has a job queued or running.
  double active = 1;
  for (const auto give_up = std::chrono::steady_clock::now() + 30s;
       active > 0 && std::chrono::steady_clock::now() < give_up; std::this_thread::sleep_for(20ms)) {
    active = 0;
    for (const KilnServeProcess* server : servers) active += FleetTuneMetricSum(*server, "kiln_tune_jobs");
  }
  ASSERT_EQ(active, 0);
  double runs = 0;
  for (const KilnServeProcess* server : servers) runs += FleetTuneMetricSum(*server, "kiln_tune_jobs_ended_total");
  EXPECT_EQ(runs, 1) << "tuning runs in the fleet";
}

TEST(ServerFleetTuneTest, TheJobOfAServerKilledMidTuningIsTakenOverAfterItsLeaseLapses) {
  FLEET_TUNE_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess b(FleetTuneFlags(redis));
  ASSERT_TRUE(b.ok());
  const std::string b_name = FleetTuneServerName(b);
  // b compiles (its store keeps the module text); a gets the entry from
  // Redis and is asked to tune it; a is killed while it tunes. Should a
  // finish before it is killed (a fast machine), try another module.
  std::string id, a_name;
  bool caught = false;
  double ended_before = 0;
  std::chrono::steady_clock::time_point killed_at;
  for (int attempt = 0; attempt < 3 && !caught; ++attempt) {
    ended_before = FleetTuneMetricSum(b, "kiln_tune_jobs_ended_total");
    const std::string module = FleetTuneModule(10 + attempt);
    FleetTuneCompile(b, module);
    KilnServeProcess a(FleetTuneFlags(redis));
    ASSERT_TRUE(a.ok());
    a_name = FleetTuneServerName(a);
    FleetTuneCompile(a, module);
    const http::testing::RawResponse started = FleetTuneStart(a, module);
    ASSERT_EQ(started.status, 202) << started.body;
    id = FleetTuneJson(started).value("id", "");
    EXPECT_EQ(FleetTuneJson(started).value("server", ""), a_name);
    const json running = FleetTuneWaitFor(a, id, {"running", "done", "failed", "cancelled"});
    ASSERT_NE(running.value("state", ""), "failed") << running.dump();
    // b sees a's job, and answers a request for the entry with it.
    json seen = FleetTuneListed(b, id);
    const http::testing::RawResponse asked = FleetTuneStart(b, module);
    killed_at = std::chrono::steady_clock::now();
    a.Signal(SIGKILL);
    ASSERT_TRUE(a.WaitForExit(5s));
    caught = running.value("state", "") == "running" && seen.is_object() && asked.status == 200 &&
             FleetTuneJson(asked).value("id", "") == id;
    if (caught) {
      EXPECT_EQ(seen.value("server", ""), a_name);
      EXPECT_EQ(FleetTuneJson(asked).value("server", ""), a_name);
    } else if (asked.status == 202) {
      // a had finished: b tuned it again; let that end before the next try.
      FleetTuneWaitFor(b, FleetTuneJson(asked).value("id", ""), {"done", "failed", "cancelled"});
    }
  }
  ASSERT_TRUE(caught) << "the tuning finished each time before its server was killed";

  // Within a lease and a scan b runs it: a job of its own that took a's over,
  // answered under a's id too.
  json taken;
  for (const auto give_up = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < give_up;
       std::this_thread::sleep_for(20ms)) {
    taken = FleetTuneJson(b.Call("GET", "/v1/tune/" + id));
    if (taken.value("takes_over", json()) == id) break;
  }
  ASSERT_EQ(taken.value("takes_over", json()), id) << taken.dump();
  const auto takeover = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at);
  RecordProperty("takeover_ms", static_cast<int>(takeover.count()));
  EXPECT_EQ(taken.value("server", ""), b_name);
  EXPECT_NE(taken.value("id", ""), id);
  const json done = FleetTuneWaitFor(b, taken.value("id", ""), {"done", "failed", "cancelled"});
  EXPECT_EQ(done.value("state", ""), "done") << done.dump();
  EXPECT_TRUE(done.value("stored", false)) << done.dump();
  EXPECT_EQ(FleetTuneMetricSum(b, "kiln_tune_fleet_takeovers_total"), 1);
  EXPECT_EQ(FleetTuneMetricSum(b, "kiln_tune_jobs_ended_total") - ended_before, 1);
  // Finished: nothing left for anyone to take over, nothing listed.
  Result<cache::shared::RedisReply> listed = redis.Command({"KEYS", "kiln:tune:jobs:*"});
  ASSERT_TRUE(listed);
  for (const auto& key : listed->elements) {
    Result<cache::shared::RedisReply> size = redis.Command({"HLEN", key.text});
    ASSERT_TRUE(size);
    EXPECT_EQ(size->integer, 0) << key.text;
  }
}

TEST(ServerFleetTuneTest, WithRedisDownTuningRunsLocally) {
  FLEET_TUNE_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(FleetTuneFlags(redis, {}));
  ASSERT_TRUE(a.ok());
  const std::string module = FleetTuneModule(20);
  FleetTuneCompile(a, module);
  redis.Kill();
  const http::testing::RawResponse started = FleetTuneStart(a, module);
  ASSERT_EQ(started.status, 202) << started.body;
  const json done = FleetTuneWaitFor(a, FleetTuneJson(started).value("id", ""), {"done", "failed", "cancelled"});
  EXPECT_EQ(done.value("state", ""), "done") << done.dump();
  EXPECT_EQ(FleetTuneJson(a.Call("GET", "/v1/tune")).value("jobs", json::array()).size(), 1u);
}

}  // namespace
}  // namespace kiln::api::testing
