// `kiln serve --shared`: real kiln servers (child processes) sharing a real
// redis-server on a free loopback port. Skipped, saying why, only when
// redis-server is not installed (scripts/setup.sh installs it).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cache/shared/shared_tier.h"
#include "cache/shared/testing/redis_server.h"
#include "tests/chained_dot_module.h"
#include "tests/kiln_serve_process.h"
#include "server/api/auth.h"
#include "tests/run_kiln.h"
#include "tests/tunable_module.h"

namespace kiln::api::testing {
namespace {

using namespace std::chrono_literals;
using cache::shared::testing::RedisServer;
using json = nlohmann::json;

// A module of its own per `seed` (the constant differs, so the key does).
std::string SmallModule(int seed) {
  return "HloModule shared_" + std::to_string(seed) +
         "\n\nENTRY main {\n  x = f32[8,128]{1,0} parameter(0)\n  c = f32[] constant(" + std::to_string(seed) +
         ")\n  b = f32[8,128]{1,0} broadcast(c), dimensions={}\n  ROOT y = f32[8,128]{1,0} add(x, b)\n}\n";
}

// A module that takes a few hundred milliseconds to compile.
std::string SlowModule(int seed, int dots = 40000) { return kiln::testing::ChainedDotModule(seed, dots); }

std::vector<std::string> SharedFlags(const RedisServer& redis, std::vector<std::string> more = {},
                                     const std::string& lease = "1s", const std::string& timeout = "500ms") {
  std::vector<std::string> flags = {"--shared", redis.url(), "--shared-lease", lease, "--shared-timeout", timeout};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// The Redis key of the default tenant's v5e entry (or lease) for `key`.
std::string RedisKey(const std::string& key, std::string_view what) {
  Result<hlo::Hash128> hash = cache::ParseHash128(key);
  EXPECT_TRUE(hash) << key;
  const cache::EntryId id{"default", hash ? *hash : hlo::Hash128{}, "v5e", kCompilerFormatVersion};
  return what == "lease" ? cache::shared::SharedTier::LeaseKey(id) : cache::shared::SharedTier::EntryKey(id);
}

json Compile(const KilnServeProcess& server, const std::string& module) {
  http::testing::RawResponse response = server.Call("POST", "/v1/compile", module, "Content-Type: text/plain\r\n");
  EXPECT_EQ(response.status, 200) << response.body;
  json body = json::parse(response.body, nullptr, false);
  return body.is_discarded() ? json::object() : body;
}

// A metric's value, read with `headers` (an admin's token where the server
// has an auth file); -1, failing the test, when /metrics does not answer or
// lacks the metric.
double Metric(const KilnServeProcess& server, const std::string& name, const std::string& headers = "") {
  const http::testing::RawResponse response = server.Call("GET", "/metrics", "", headers);
  EXPECT_EQ(response.status, 200) << response.body;
  const size_t at = response.body.find("\n" + name + " ");
  EXPECT_NE(at, std::string::npos) << name << " is not in /metrics";
  return at == std::string::npos ? -1 : std::stod(response.body.substr(at + name.size() + 2));
}

// A compile is answered before its entry is published (the publish is off
// the trainer's path): waits, bounded, until `servers` have published `n`
// entries between them; fails the test when they have not within 20 s.
void WaitForPublishes(std::initializer_list<const KilnServeProcess*> servers, double n,
                      const std::string& headers = "") {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  double published = 0;
  while (std::chrono::steady_clock::now() < give_up) {
    published = 0;
    for (const KilnServeProcess* server : servers) published += Metric(*server, "kiln_shared_publishes_total", headers);
    if (published >= n) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ADD_FAILURE() << "the servers published " << published << " entries in 20 s, not " << n;
}

// POST /v1/explain of `module` on `server`: its answer.
json SharedTierExplain(const KilnServeProcess& server, const std::string& module) {
  const http::testing::RawResponse response = server.Call("POST", "/v1/explain", module, "Content-Type: text/plain\r\n");
  EXPECT_EQ(response.status, 200) << response.body;
  const json answer = json::parse(response.body, nullptr, false);
  return answer.is_object() ? answer : json::object();
}

// Whether an explain answer names instruction `name` among its changes
// (there are none when the nearest entry's HLO text was not kept).
bool SharedTierNamesChange(const json& explained, const std::string& name) {
  if (!explained.contains("changes") || !explained["changes"].is_array()) return false;
  for (const json& change : explained["changes"]) {
    if (change.value("instruction", "") == name) return true;
  }
  return false;
}

#define REQUIRE_REDIS()                                                                              \
  if (!RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)"

TEST(ServerSharedTierTest, FortyIdenticalCompilesOverTwoServersCompileOnce) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis)), b(SharedFlags(redis));
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string module = SlowModule(1, 4000);
  std::mutex mu;
  std::map<std::string, int> outcomes;  // "cache/tier"
  std::set<std::string> keys;
  std::vector<std::thread> senders;
  for (int i = 0; i < 40; ++i) {
    senders.emplace_back([&, i] {
      json answer = Compile(i % 2 ? a : b, module);
      std::lock_guard lock(mu);
      outcomes[answer.value("cache", "?") + "/" + answer.value("tier", "?")]++;
      keys.insert(answer.value("key", "?"));
    });
  }
  for (std::thread& t : senders) t.join();
  EXPECT_EQ(outcomes["miss/local"], 1) << json(outcomes).dump();
  int answered = 0;
  for (const auto& [outcome, count] : outcomes) answered += count;
  EXPECT_EQ(answered, 40);
  EXPECT_EQ(keys.size(), 1u);
  // One compile in all: the two servers' compile counters add up to one.
  WaitForPublishes({&a, &b}, 1);
  EXPECT_EQ(Metric(a, "kiln_shared_publishes_total") + Metric(b, "kiln_shared_publishes_total"), 1);
}

TEST(ServerSharedTierTest, AServerWithAnEmptyStoreAnswersAHitFromRedisWithTheSameBytes) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis));
  ASSERT_TRUE(a.ok());
  json compiled = Compile(a, SmallModule(2));
  EXPECT_EQ(compiled.value("cache", ""), "miss");
  const std::string key = compiled.value("key", "");
  WaitForPublishes({&a}, 1);

  KilnServeProcess c(SharedFlags(redis));
  ASSERT_TRUE(c.ok());
  json fetched = Compile(c, SmallModule(2));
  EXPECT_EQ(fetched.value("cache", ""), "hit");
  EXPECT_EQ(fetched.value("tier", ""), "shared");
  EXPECT_EQ(fetched.value("key", ""), key);
  EXPECT_EQ(fetched.value("estimated_us", 0.0), compiled.value("estimated_us", -1.0));
  EXPECT_EQ(Metric(c, "kiln_shared_hits_total"), 1);
  // The same executable bytes, now in c's own store: the next one is local.
  EXPECT_EQ(c.Call("GET", "/v1/executables/" + key).body, a.Call("GET", "/v1/executables/" + key).body);
  json again = Compile(c, SmallModule(2));
  EXPECT_EQ(again.value("cache", ""), "hit");
  EXPECT_EQ(again.value("tier", ""), "local");
  // And it runs there.
  std::string ones = "1";
  for (int i = 1; i < 8 * 128; ++i) ones += ",1";
  http::testing::RawResponse ran =
      c.Call("POST", "/v1/executables/" + key + "/execute",
             R"({"inputs": [{"shape": [8,128], "dtype": "f32", "data": [)" + ones + "]}]}",
             "Content-Type: application/json\r\n");
  json outputs = json::parse(ran.body, nullptr, false);
  EXPECT_EQ(outputs.dump().find("3.0") != std::string::npos || outputs.dump().find(",3,") != std::string::npos ||
                outputs.dump().find("[3,") != std::string::npos,
            true)
      << ran.body.substr(0, 300);
  EXPECT_EQ(ran.status, 200) << ran.body;
}

TEST(ServerSharedTierTest, InspectShowSaysWhereAnEntryLives) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis)), c(SharedFlags(redis));
  ASSERT_TRUE(a.ok() && c.ok());
  const std::string key = Compile(a, SmallModule(50)).value("key", "");
  WaitForPublishes({&a}, 1);
  auto show = [&](const KilnServeProcess& server) {
    kiln::testing::RunResult shown = kiln::testing::RunKiln("inspect show " + key + " --db " + server.db_path().string() +
                                                            " --shared " + redis.url() + " --json");
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    json out = json::parse(shown.out, nullptr, false);
    return out.is_object() ? out : json::object();
  };
  json on_a = show(a);
  EXPECT_EQ(on_a.value("local", false), true);
  EXPECT_EQ(on_a["shared"].value("present", false), true);
  EXPECT_GT(on_a["shared"].value("expires_in_s", 0.0), 6 * 24 * 3600.0);  // --shared-ttl's 7 days
  json on_c = show(c);
  EXPECT_EQ(on_c.value("local", true), false);
  EXPECT_EQ(on_c["shared"].value("present", false), true);
  ASSERT_TRUE(redis.Command({"DEL", RedisKey(key, "entry")}));
  kiln::testing::RunResult gone = kiln::testing::RunKiln("inspect show " + key + " --db " + c.db_path().string() +
                                                         " --shared " + redis.url());
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("here or in the shared tier"), std::string::npos) << gone.err;
}

TEST(ServerSharedTierTest, KillingTheLeaseholderMidCompileLetsAnotherServerFinish) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  // A 5 s exchange timeout: on a loaded machine a sanitized server's Redis
  // exchange can pass 500 ms, and b would then compile on its own, as a
  // server does while the tier is down, without ever seeing the lease.
  const std::vector<std::string> flags = SharedFlags(redis, {}, "1s", "5s");
  KilnServeProcess b(flags);
  ASSERT_TRUE(b.ok());
  // A takes the lease and compiles (renewing it); b is asked for the same
  // module and found waiting on A's lease; then A is killed mid-compile.
  // A stays alive until b waits, so its lease cannot lapse first however
  // long b takes to get there (parsing the module under a sanitizer on a
  // loaded machine took longer than a frozen holder's lease lasted). Should
  // A publish before it is killed (a fast machine), try another module.
  bool caught = false;
  std::string module;
  std::optional<json> finished;
  double waits_before = 0, takeovers_before = 0;
  auto entry_published = [&] {
    auto entries = redis.Command({"KEYS", "kiln:*:entry"});
    return !entries || !entries->elements.empty();
  };
  for (int attempt = 0; attempt < 3 && !caught; ++attempt) {
    ASSERT_TRUE(redis.Command({"FLUSHALL"}));
    module = SlowModule(100 + attempt);
    waits_before = Metric(b, "kiln_shared_lease_waits_total");
    takeovers_before = Metric(b, "kiln_shared_lease_takeovers_total");
    KilnServeProcess a(flags);
    ASSERT_TRUE(a.ok());
    // Its answer never comes: the connection closes when it is killed.
    std::thread sender([&] {
      auto client = http::testing::RawHttpClient::Connect(a.port(), 20s);
      if (client) (void)client->RoundTrip(http::testing::MakeRequest("POST", "/v1/compile", module, "Content-Type: text/plain\r\n"));
    });
    bool leased = false;
    for (const auto give_up = std::chrono::steady_clock::now() + 20s;
         !leased && std::chrono::steady_clock::now() < give_up; std::this_thread::sleep_for(1ms)) {
      auto leases = redis.Command({"KEYS", "kiln:*:lease"});
      leased = leases && !leases->elements.empty();
    }
    std::thread waiter;
    if (leased) {
      finished.reset();
      waiter = std::thread([&] { finished = Compile(b, module); });
      bool waiting = false;
      for (const auto give_up = std::chrono::steady_clock::now() + 20s;
           !waiting && !entry_published() && std::chrono::steady_clock::now() < give_up;
           std::this_thread::sleep_for(5ms)) {
        waiting = Metric(b, "kiln_shared_lease_waits_total") > waits_before;
      }
      a.Signal(SIGKILL);
      caught = waiting && !entry_published();
    } else {
      a.Signal(SIGKILL);
    }
    sender.join();
    if (waiter.joinable()) waiter.join();
  }
  ASSERT_TRUE(caught) << "the leaseholder published each time before another server waited on it";

  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->value("cache", ""), "miss");  // b compiled it after the lease lapsed
  EXPECT_EQ(Metric(b, "kiln_shared_lease_waits_total") - waits_before, 1);
  EXPECT_EQ(Metric(b, "kiln_shared_lease_takeovers_total") - takeovers_before, 1);
  WaitForPublishes({&b}, 1);
  auto entries = redis.Command({"KEYS", "kiln:*:entry"});
  ASSERT_TRUE(entries);
  EXPECT_EQ(entries->elements.size(), 1u);
}

TEST(ServerSharedTierTest, WaitingOnAnotherServersLeaseHoldsNoCompileThread) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  // X's key, from a server of its own.
  std::string key;
  {
    KilnServeProcess alone({});
    ASSERT_TRUE(alone.ok());
    key = Compile(alone, SmallModule(40)).value("key", "");
  }
  ASSERT_FALSE(key.empty());
  // Another server holds X's lease for 0.9 s of b's 1 s lease (and then
  // goes silent).
  ASSERT_TRUE(redis.Command({"SET", RedisKey(key, "lease"), "elsewhere:1:0", "PX", "900"}));
  KilnServeProcess b(SharedFlags(redis, {"--compile-threads", "1"}));
  ASSERT_TRUE(b.ok());
  std::atomic<int> order{0};
  int x_done = 0, y_done = 0;
  json x_answer;
  std::thread x([&] {
    x_answer = Compile(b, SmallModule(40));
    x_done = ++order;
  });
  std::this_thread::sleep_for(300ms);  // X is waiting on the lease now
  json y_answer = Compile(b, SmallModule(41));
  y_done = ++order;
  x.join();
  EXPECT_EQ(y_answer.value("cache", ""), "miss");
  EXPECT_LT(y_done, x_done) << "a compile queued behind a wait on another server's lease";
  EXPECT_EQ(x_answer.value("cache", ""), "miss");  // taken over once the lease lapsed
  EXPECT_EQ(Metric(b, "kiln_shared_lease_takeovers_total"), 1);
}

TEST(ServerSharedTierTest, TenantsShareNothingInRedisButTheSharedNamespace) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  const std::filesystem::path tokens = std::filesystem::temp_directory_path() / ("kiln-shared-tokens-" + std::to_string(getpid()));
  {
    std::ofstream out(tokens);
    out << HashToken("alice-token") << " alice compile shared\n" << HashToken("bob-token") << " bob compile shared\n"
        << HashToken("ops-token") << " ops admin\n";
  }
  const std::string admin = "Authorization: Bearer ops-token\r\n";  // /metrics is an admin's route
  KilnServeProcess a(SharedFlags(redis, {"--auth-file", tokens.string()}));
  KilnServeProcess b(SharedFlags(redis, {"--auth-file", tokens.string()}));
  ASSERT_TRUE(a.ok() && b.ok());
  auto compile = [](const KilnServeProcess& server, const std::string& token, bool shared_namespace) {
    std::string headers = "Content-Type: text/plain\r\nAuthorization: Bearer " + token + "\r\n";
    if (shared_namespace) headers += "X-Kiln-Namespace: shared\r\n";
    http::testing::RawResponse response = server.Call("POST", "/v1/compile", SmallModule(60), headers);
    EXPECT_EQ(response.status, 200) << response.body;
    json body = json::parse(response.body, nullptr, false);
    return body.is_object() ? body.value("cache", "") + "/" + body.value("tier", "") : std::string("?");
  };
  // The same module, two tenants on two servers: each tenant compiles its own.
  EXPECT_EQ(compile(a, "alice-token", false), "miss/local");
  EXPECT_EQ(compile(b, "bob-token", false), "miss/local");
  WaitForPublishes({&a}, 1, admin);
  EXPECT_EQ(compile(b, "alice-token", false), "hit/shared");
  // The shared namespace is shared across tenants and servers.
  EXPECT_EQ(compile(a, "alice-token", true), "miss/local");
  WaitForPublishes({&a}, 2, admin);
  EXPECT_EQ(compile(b, "bob-token", true), "hit/shared");
  auto keys = redis.Command({"KEYS", "kiln:*:entry"});
  ASSERT_TRUE(keys);
  std::set<std::string> tenants;
  for (const auto& key : keys->elements) tenants.insert(key.text.substr(key.text.rfind(":", key.text.size() - 7) + 1));
  EXPECT_EQ(tenants, (std::set<std::string>{"alice:entry", "bob:entry", "shared:entry"}));
  std::filesystem::remove(tokens);
}

TEST(ServerSharedTierTest, ServersShareThroughARedisCluster) {
  REQUIRE_REDIS();
  cache::shared::testing::RedisCluster cluster;
  if (!cluster.ok()) GTEST_SKIP() << "could not form a Redis Cluster (redis-cli --cluster create failed)";
  KilnServeProcess a({"--shared", cluster.url()}), b({"--shared", cluster.url()});
  ASSERT_TRUE(a.ok() && b.ok());
  for (int seed = 70; seed < 82; ++seed) {  // keys over every node's slots
    EXPECT_EQ(Compile(a, SmallModule(seed)).value("cache", ""), "miss");
    WaitForPublishes({&a}, seed - 70 + 1);
    json fetched = Compile(b, SmallModule(seed));
    EXPECT_EQ(fetched.value("cache", "") + "/" + fetched.value("tier", ""), "hit/shared") << seed;
  }
  EXPECT_EQ(Metric(b, "kiln_shared_hits_total"), 12);
  EXPECT_EQ(Metric(b, "kiln_shared_errors_total"), 0);
}

TEST(ServerSharedTierTest, ATunedReplacementIsPublishedToo) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis));
  ASSERT_TRUE(a.ok());
  const std::string module = kiln::testing::kTunableModule;
  EXPECT_EQ(Compile(a, module).value("plan", ""), "heuristic");
  json request = {{"hlo", module}, {"chip", "v5e"}, {"max_trials", 12}, {"seed", 5}};
  http::testing::RawResponse started = a.Call("POST", "/v1/tune", request.dump(), "Content-Type: application/json\r\n");
  ASSERT_EQ(started.status, 202) << started.body;
  const std::string id = json::parse(started.body).value("id", "");
  json job;
  for (int i = 0; i < 1200; ++i) {
    job = json::parse(a.Call("GET", "/v1/tune/" + id).body, nullptr, false);
    const std::string state = job.value("state", "");
    if (state == "done" || state == "failed" || state == "cancelled") break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(job.value("state", ""), "done") << job.dump();
  ASSERT_TRUE(job.value("stored", false)) << job.dump();
  WaitForPublishes({&a}, 2);
  EXPECT_EQ(Metric(a, "kiln_shared_publishes_total"), 2);

  KilnServeProcess c(SharedFlags(redis));
  ASSERT_TRUE(c.ok());
  json fetched = Compile(c, module);
  EXPECT_EQ(fetched.value("tier", ""), "shared");
  EXPECT_EQ(fetched.value("plan", ""), "tuned");
  EXPECT_NEAR(fetched.value("estimated_us", 0.0), job.value("tuned_us", -1.0), 1e-3);

  // The tuned replacement carries the text the job tuned: on c, which never
  // compiled the module, explain names the changed instruction and a tune
  // by key alone needs no HLO (it answered hlo_required without the text).
  std::string changed = module;
  changed.replace(changed.find("sine(x)"), 7, "cosine(x)");
  const json explained = SharedTierExplain(c, changed);
  EXPECT_TRUE(SharedTierNamesChange(explained, "s")) << explained.dump();
  const json by_key = {{"key", fetched.value("key", "")}, {"chip", "v5e"}, {"max_trials", 4}};
  http::testing::RawResponse again = c.Call("POST", "/v1/tune", by_key.dump(), "Content-Type: application/json\r\n");
  EXPECT_TRUE(again.status == 200 || again.status == 202) << again.status << " " << again.body;
  EXPECT_EQ(again.body.find("hlo_required"), std::string::npos) << again.body;
}

TEST(ServerSharedTierTest, AnEntryFetchedFromRedisExplainsAMissInstructionByInstruction) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis)), c(SharedFlags(redis));
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ(Compile(a, SmallModule(310)).value("cache", ""), "miss");
  WaitForPublishes({&a}, 1);
  EXPECT_EQ(Compile(c, SmallModule(310)).value("tier", ""), "shared");
  // c compiled nothing; its entry's text came with it from Redis.
  const json explained = SharedTierExplain(c, SmallModule(311));
  EXPECT_TRUE(SharedTierNamesChange(explained, "c")) << explained.dump();
}

TEST(ServerSharedTierTest, ASlowRedisCostsLatencyNotErrors) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Compile(a, SmallModule(90)).value("cache", ""), "miss");
  redis.Pause();  // accepts, never answers
  const auto start = std::chrono::steady_clock::now();
  json answered = Compile(a, SmallModule(91));
  const auto took = std::chrono::steady_clock::now() - start;
  redis.Resume();
  EXPECT_EQ(answered.value("cache", "") + "/" + answered.value("tier", ""), "miss/local");
  EXPECT_LT(took, 10s);  // one --shared-timeout (500ms), not a hang
  EXPECT_GE(Metric(a, "kiln_shared_errors_total"), 1);
}

TEST(ServerSharedTierTest, KillingRedisKeepsEveryServerAnswering) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis)), b(SharedFlags(redis));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Compile(a, SmallModule(10)).value("cache", ""), "miss");
  WaitForPublishes({&a}, 1);
  EXPECT_EQ(Compile(b, SmallModule(10)).value("tier", ""), "shared");
  redis.Kill();

  for (KilnServeProcess* server : {&a, &b}) {
    // What each holds is a local hit; a new module compiles locally.
    EXPECT_EQ(Compile(*server, SmallModule(10)).value("cache", ""), "hit");
    json fresh = Compile(*server, SmallModule(11));
    EXPECT_EQ(fresh.value("cache", ""), "miss");
    EXPECT_EQ(fresh.value("tier", ""), "local");
    json health = json::parse(server->Call("GET", "/healthz").body, nullptr, false);
    EXPECT_EQ(health.value("status", ""), "ok");
    EXPECT_EQ(health["shared"].value("state", ""), "down") << health.dump();
    EXPECT_GE(Metric(*server, "kiln_shared_errors_total"), 1);
    EXPECT_EQ(Metric(*server, "kiln_shared_up"), 0);
  }

  // Back: each server's background probe finds it within a second or two,
  // with no request touching Redis (a probe found /healthz saying down for
  // minutes, until a compile came).
  ASSERT_TRUE(redis.Restart());
  for (KilnServeProcess* server : {&a, &b}) {
    json health;
    for (const auto give_up = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < give_up;
         std::this_thread::sleep_for(50ms)) {
      health = json::parse(server->Call("GET", "/healthz").body, nullptr, false);
      if (health["shared"].value("state", "") == "up") break;
    }
    EXPECT_EQ(health["shared"].value("state", ""), "up") << health.dump();
  }
  EXPECT_EQ(Compile(a, SmallModule(30)).value("cache", ""), "miss");
  WaitForPublishes({&a}, 2);
}

TEST(ServerSharedTierTest, ABadSharedUrlStopsTheServerWithoutEchoingThePassword) {
  const std::string db = (std::filesystem::temp_directory_path() / "kiln-shared-bad-url.db").string();
  kiln::testing::RunResult bad =
      kiln::testing::RunKiln("serve --listen 127.0.0.1:0 --db " + db + " --shared 'redis://:hunter2@127.0.0.1:notaport'");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("port 'notaport'"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("hunter2"), std::string::npos) << bad.err;
  std::filesystem::remove(db);
}

TEST(ServerSharedTierTest, AnUnreachableRedisAtStartIsAWarningNotAFailure) {
  const uint16_t nobody = cache::shared::testing::FreePort();
  KilnServeProcess server({"--shared", "redis://:hunter2@127.0.0.1:" + std::to_string(nobody)});
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(Compile(server, SmallModule(30)).value("cache", ""), "miss");
  json health = json::parse(server.Call("GET", "/healthz").body, nullptr, false);
  EXPECT_EQ(health["shared"].value("state", ""), "down");
  EXPECT_EQ(health.dump().find("hunter2"), std::string::npos);
}


// Found by a hostile probe: a lease key planted without a TTL held its
// compile past 40 s. No live kiln's lease lacks a TTL, or has one longer
// than --shared-lease: it is taken over at once.
TEST(ServerSharedTierTest, APlantedLeaseWithoutATimeToLiveHoldsNothing) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  std::string key, long_key;
  {
    KilnServeProcess alone({});
    ASSERT_TRUE(alone.ok());
    key = Compile(alone, SmallModule(50)).value("key", "");
    long_key = Compile(alone, SmallModule(51)).value("key", "");
  }
  ASSERT_TRUE(redis.Command({"SET", RedisKey(key, "lease"), "ghost"}));
  ASSERT_TRUE(redis.Command({"SET", RedisKey(long_key, "lease"), "ghost", "PX", "3600000"}));
  KilnServeProcess b(SharedFlags(redis, {}, "15s"));
  ASSERT_TRUE(b.ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Compile(b, SmallModule(50)).value("cache", ""), "miss");
  EXPECT_EQ(Compile(b, SmallModule(51)).value("cache", ""), "miss");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "a planted lease held a compile";
  EXPECT_EQ(Metric(b, "kiln_shared_stale_leases_total"), 2);
  EXPECT_EQ(Metric(b, "kiln_shared_lease_waits_total"), 0);
}

// Found by a hostile probe: eight compiles waiting on another server's
// leases held all eight shared-tier threads, so another tenant's unrelated
// miss took seconds, and a client that left kept its wait. Now waits hold
// no thread and end when their clients go.
TEST(ServerSharedTierTest, WaitsOnLiveLeasesHoldNoThreadAndEndWhenTheirClientsLeave) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  constexpr int kWaits = 12;  // more than the 8 shared-tier threads
  std::vector<std::string> keys;
  {
    KilnServeProcess alone({});
    ASSERT_TRUE(alone.ok());
    for (int i = 0; i < kWaits; ++i) keys.push_back(Compile(alone, SmallModule(60 + i)).value("key", ""));
  }
  // Live leases of another server: 20 s each, within b's --shared-lease.
  for (const std::string& key : keys) {
    ASSERT_TRUE(redis.Command({"SET", RedisKey(key, "lease"), "elsewhere:1:0", "PX", "20000"}));
  }
  KilnServeProcess b(SharedFlags(redis, {"--compile-threads", "1"}, "30s"));
  ASSERT_TRUE(b.ok());
  std::vector<http::testing::RawHttpClient> clients;
  for (int i = 0; i < kWaits; ++i) {
    auto client = http::testing::RawHttpClient::Connect(b.port(), 5s);
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->Send(
        http::testing::MakeRequest("POST", "/v1/compile", SmallModule(60 + i), "Content-Type: text/plain\r\n")));
    clients.push_back(std::move(*client));
  }
  for (const auto give_up = std::chrono::steady_clock::now() + 10s;
       Metric(b, "kiln_shared_lease_waiting") < kWaits && std::chrono::steady_clock::now() < give_up;) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(Metric(b, "kiln_shared_lease_waiting"), kWaits);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Compile(b, SmallModule(99)).value("cache", ""), "miss");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "an unrelated miss waited behind lease waits";
  EXPECT_EQ(b.Call("GET", "/healthz").status, 200);
  // The clients go: their waits end long before the leases would.
  clients.clear();
  for (const auto give_up = std::chrono::steady_clock::now() + 5s;
       Metric(b, "kiln_shared_lease_waiting") > 0 && std::chrono::steady_clock::now() < give_up;) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(Metric(b, "kiln_shared_lease_waiting"), 0) << "a wait outlived its client";
  EXPECT_EQ(Metric(b, "kiln_shared_lease_takeovers_total"), 0);
}

// Found by a hostile probe: a shared-tier hit answered `stored: true` ~300
// ms before its local write; a kill -9 then lost it. Now the fetched entry
// is in the local store when the answer says so.
TEST(ServerSharedTierTest, ASharedHitIsStoredLocallyWhenItsAnswerSaysSo) {
  REQUIRE_REDIS();
  RedisServer redis;
  ASSERT_TRUE(redis.ok());
  KilnServeProcess a(SharedFlags(redis));
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Compile(a, SmallModule(200 + i)).value("cache", ""), "miss");
  WaitForPublishes({&a}, 6);
  std::vector<std::string> keys;
  std::filesystem::path db;
  {
    KilnServeProcess b(SharedFlags(redis));
    ASSERT_TRUE(b.ok());
    db = b.db_path();
    for (int i = 0; i < 6; ++i) {
      json answer = Compile(b, SmallModule(200 + i));
      EXPECT_EQ(answer.value("tier", ""), "shared");
      EXPECT_TRUE(answer.value("stored", false));
      keys.push_back(answer.value("key", ""));
    }
    b.Signal(SIGKILL);  // the moment the last answer came
    ASSERT_TRUE(b.WaitForExit(5s));
    kiln::testing::RunResult listed = kiln::testing::RunKiln("inspect list --json --db " + db.string());
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    for (const std::string& key : keys) EXPECT_NE(listed.out.find(key), std::string::npos) << key << " was lost";
  }
}

}  // namespace
}  // namespace kiln::api::testing
