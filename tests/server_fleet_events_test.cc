// `kiln serve --shared`: what the fleet's events do between real kiln
// servers (child processes) on a real redis-server on a free loopback port:
// a tuned plan reaches every server holding the entry, a server that missed
// the event catches up on its next lookup, and a failing module is compiled
// once in the fleet. Skipped, saying why, only when redis-server is not
// installed (scripts/setup.sh installs it).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cache/shared/shared_tier.h"
#include "cache/shared/testing/redis_server.h"
#include "tests/chained_dot_module.h"
#include "tests/kiln_serve_process.h"
#include "tests/run_kiln.h"
#include "tests/tunable_module.h"

namespace kiln::api::testing {
namespace {

using namespace std::chrono_literals;
using cache::shared::testing::RedisServer;
using json = nlohmann::json;
using kiln::testing::RunKiln;
using kiln::testing::RunResult;

#define FLEET_EVENTS_REQUIRE_REDIS()                                                                 \
  if (!RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)"

std::vector<std::string> FleetServeFlags(const RedisServer& redis) {
  return {"--shared", redis.url(), "--shared-lease", "2s", "--shared-timeout", "500ms"};
}

// The answer's status and body of one compile of `module` on v5e.
std::pair<int, json> FleetCompile(const KilnServeProcess& server, const std::string& module) {
  http::testing::RawResponse response = server.Call("POST", "/v1/compile", module, "Content-Type: text/plain\r\n");
  json body = json::parse(response.body, nullptr, false);
  return {response.status, body.is_discarded() ? json::object() : body};
}

double FleetMetric(const KilnServeProcess& server, const std::string& name) {
  const http::testing::RawResponse response = server.Call("GET", "/metrics");
  const size_t at = response.body.find("\n" + name + " ");
  EXPECT_NE(at, std::string::npos) << name << " is not in /metrics";
  return at == std::string::npos ? -1 : std::stod(response.body.substr(at + name.size() + 2));
}

// Until `server` says it subscribed to the fleet's events (bounded: 10 s).
void WaitUntilSubscribed(const KilnServeProcess& server) {
  for (int i = 0; i < 1000 && FleetMetric(server, "kiln_shared_subscribed") != 1; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(FleetMetric(server, "kiln_shared_subscribed"), 1) << "the server never subscribed";
}

// Tunes `module` on `server` until the tuned entry is stored; its job.
json TuneUntilStored(const KilnServeProcess& server, const std::string& module) {
  json request = {{"hlo", module}, {"chip", "v5e"}, {"max_trials", 12}, {"seed", 5}};
  http::testing::RawResponse started =
      server.Call("POST", "/v1/tune", request.dump(), "Content-Type: application/json\r\n");
  EXPECT_EQ(started.status, 202) << started.body;
  const std::string id = json::parse(started.body, nullptr, false).value("id", "");
  json job;
  for (int i = 0; i < 1200; ++i) {
    job = json::parse(server.Call("GET", "/v1/tune/" + id).body, nullptr, false);
    const std::string state = job.value("state", "");
    if (state == "done" || state == "failed" || state == "cancelled") break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(job.value("state", ""), "done") << job.dump();
  EXPECT_TRUE(job.value("stored", false)) << job.dump();
  return job;
}

// The plan `server` answers for `module`, asked until it is `plan` (at most
// `limit`); the last answer's plan.
std::string PlanWithin(const KilnServeProcess& server, const std::string& module, const std::string& plan,
                       std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  std::string answered;
  do {
    answered = FleetCompile(server, module).second.value("plan", "");
    if (answered == plan) return answered;
    std::this_thread::sleep_for(20ms);
  } while (std::chrono::steady_clock::now() < give_up);
  return answered;
}

TEST(ServerFleetEventsTest, ATunedPlanReachesEveryServerHoldingTheEntry) {
  FLEET_EVENTS_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(FleetServeFlags(redis)), b(FleetServeFlags(redis)), c(FleetServeFlags(redis));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  for (const KilnServeProcess* server : {&a, &b, &c}) WaitUntilSubscribed(*server);
  const std::string module = kiln::testing::kTunableModule;
  EXPECT_EQ(FleetCompile(a, module).second.value("plan", ""), "heuristic");
  // b and c hold the heuristic entry too (fetched from Redis, kept locally).
  for (const KilnServeProcess* server : {&b, &c}) {
    for (int i = 0; i < 200 && FleetCompile(*server, module).second.value("tier", "") != "local"; ++i)
      std::this_thread::sleep_for(10ms);
    EXPECT_EQ(FleetCompile(*server, module).second.value("plan", ""), "heuristic");
  }
  const json job = TuneUntilStored(a, module);
  for (const KilnServeProcess* server : {&b, &c}) {
    EXPECT_EQ(PlanWithin(*server, module, "tuned", 10s), "tuned") << "a server kept the heuristic plan";
    const json answer = FleetCompile(*server, module).second;
    EXPECT_EQ(answer.value("tier", ""), "local") << "answered from its own store";
    EXPECT_NEAR(answer.value("estimated_us", 0.0), job.value("tuned_us", -1.0), 1e-3);
    EXPECT_EQ(FleetMetric(*server, "kiln_shared_replaced_total"), 1);
  }
  EXPECT_EQ(FleetMetric(a, "kiln_shared_replaced_total"), 0) << "the tuning server had it already";
}

TEST(ServerFleetEventsTest, AServerThatMissedTheEventCatchesUpOnItsNextLookup) {
  FLEET_EVENTS_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(FleetServeFlags(redis));
  ASSERT_TRUE(a.ok());
  const std::string module = kiln::testing::kTunableModule;
  ASSERT_EQ(FleetCompile(a, module).second.value("plan", ""), "heuristic");
  // The heuristic entry as it was before tuning, for a store that never
  // hears of the tuning.
  const std::filesystem::path bundle = std::filesystem::temp_directory_path() /
                                       ("kiln-fleet-" + std::to_string(getpid()) + ".bundle");
  ASSERT_EQ(RunKiln("inspect export --db " + a.db_path().string() + " " + bundle.string()).exit_code, 0);
  TuneUntilStored(a, module);

  KilnServeProcess b(FleetServeFlags(redis));
  ASSERT_TRUE(b.ok());
  const RunResult imported = RunKiln("inspect import --db " + b.db_path().string() + " " + bundle.string());
  std::filesystem::remove(bundle);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  // Its store's copy answers first; the look at Redis it starts brings the
  // tuned plan for the next ones.
  EXPECT_EQ(PlanWithin(b, module, "tuned", 10s), "tuned") << "the server never caught up";
  EXPECT_EQ(FleetMetric(b, "kiln_shared_replaced_total"), 1);
}

// Needs 74.5 GiB of HBM: no v5e chip holds it (422 does_not_fit).
constexpr const char* kTooBigForV5e =
    "HloModule too_big\n\nENTRY main {\n  p = f32[100000,100000]{1,0} parameter(0)\n"
    "  ROOT n = f32[100000,100000]{1,0} negate(p)\n}\n";

TEST(ServerFleetEventsTest, AFailingModuleIsCompiledOnceInTheFleet) {
  FLEET_EVENTS_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(FleetServeFlags(redis)), b(FleetServeFlags(redis)), c(FleetServeFlags(redis));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const KilnServeProcess* servers[] = {&a, &b, &c};
  std::string first_body;
  for (int i = 0; i < 12; ++i) {
    auto [status, body] = FleetCompile(*servers[i % 3], kTooBigForV5e);
    EXPECT_EQ(status, 422) << body.dump();
    const json error = body.value("error", json::object());
    EXPECT_EQ(error.value("code", ""), "does_not_fit") << body.dump();
    EXPECT_NE(error.value("message", "").find("74.5 GiB"), std::string::npos) << body.dump();
    if (i == 0) first_body = error.value("message", "");
    EXPECT_EQ(error.value("message", ""), first_body) << "every server answers the same error";
  }
  double published = 0, found = 0;
  for (const KilnServeProcess* server : servers) {
    published += FleetMetric(*server, "kiln_shared_failures_published_total");
    found += FleetMetric(*server, "kiln_shared_failures_found_total");
  }
  EXPECT_EQ(published, 1) << "compiled (and failed) once in the fleet";
  EXPECT_EQ(found, 11);
}

TEST(ServerFleetEventsTest, ACompileWaitingForAThreadHoldsNoLeaseSoAFreeServerCompilesIt) {
  FLEET_EVENTS_REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  std::vector<std::string> one_thread = FleetServeFlags(redis);
  one_thread.insert(one_thread.end(), {"--compile-threads", "1"});
  KilnServeProcess busy(one_thread), free(FleetServeFlags(redis));
  ASSERT_TRUE(busy.ok() && free.ok());
  const std::string blocker = kiln::testing::ChainedDotModule(1, 25000), queued = kiln::testing::ChainedDotModule(2, 4000);
  auto lease_of = [&](const std::string& module) {
    const std::string key =
        json::parse(free.Call("POST", "/v1/explain", module, "Content-Type: text/plain\r\n").body, nullptr, false)
            .value("key", "");
    Result<hlo::Hash128> hash = cache::ParseHash128(key);
    EXPECT_TRUE(hash) << key;
    return std::pair{key, cache::shared::SharedTier::LeaseKey(
                              cache::EntryId{"default", hash ? *hash : hlo::Hash128{}, "v5e", kCompilerFormatVersion})};
  };
  const auto [blocker_key, blocker_lease] = lease_of(blocker);
  const auto [key, lease] = lease_of(queued);
  auto exists = [&](const std::string& redis_key) {
    auto reply = redis.Command({"EXISTS", redis_key});
    return reply && reply->integer == 1;
  };

  std::thread first([&] { EXPECT_EQ(FleetCompile(busy, blocker).first, 200); });
  // The blocker holds busy's only compile thread (and its lease).
  for (int i = 0; i < 3000 && !exists(blocker_lease); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(exists(blocker_lease)) << "the blocker's compile never started";
  std::pair<int, json> on_busy;
  std::thread second([&] { on_busy = FleetCompile(busy, queued); });
  // While it waits for busy's thread, nobody holds its lease.
  std::this_thread::sleep_for(150ms);
  const bool queued_lease_held = exists(lease);
  if (exists(blocker_lease)) {
    EXPECT_FALSE(queued_lease_held) << "a compile waiting for a thread holds its lease";
  } else {
    ADD_FAILURE() << "the blocker compiled within 150 ms: nothing was queued behind it";
  }
  // So the server with a free thread compiles it, and the busy one, when
  // its thread starts the compile, finds it in Redis instead.
  const auto [status, on_free] = FleetCompile(free, queued);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(on_free.value("cache", ""), "miss");
  second.join();
  first.join();
  EXPECT_EQ(on_busy.first, 200);
  EXPECT_EQ(on_busy.second.value("tier", ""), "shared") << on_busy.second.dump();
  EXPECT_EQ(on_busy.second.value("key", ""), key);
}

}  // namespace
}  // namespace kiln::api::testing
