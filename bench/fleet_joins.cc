// Measure 3: joined latency. Server A is sent a module that takes a few
// hundred ms to compile; once A's compile lease is in Redis, server B is
// sent the same module, finds the lease held and waits on it (its answer
// says cache "joined"). The figures are B's answer minus A's, both as the
// bench receives them (steady_clock), and B's answer minus the moment the
// bench's own subscription to the fleet's events (cache/shared/
// fleet_subscriber.h) heard A's publish (what the issue measures: A
// answers first, then compresses and publishes), over --joins modules.
// One server's figure: both requests to the same server, where the second
// joins the compile in flight in the process. Target: p99 <= 20 ms after
// the publish.
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "cache/shared/fleet_subscriber.h"

#include "bench/fleet_measures.h"
#include "bench/fleet_modules.h"
#include "bench/fleet_processes.h"

namespace kiln::bench {
namespace {

struct Joins {
  std::string problem;
  std::vector<double> gap_ms;          // B's answer after A's, of answers that joined
  std::vector<double> after_publish_ms;  // B's answer after the publish was heard
  std::map<std::string, int> outcomes;  // B's "cache/tier"
  std::vector<double> compile_ms;      // A's compiles
  std::vector<double> executable_mb;   // what B fetched
};

// Until `lease` is in Redis or `done` (bounded): whether it is.
bool WaitForLease(Fleet& fleet, const std::string& lease, const std::atomic<bool>& done) {
  for (const FleetClock::time_point give_up = FleetClock::now() + std::chrono::seconds(20);
       FleetClock::now() < give_up && !done.load();) {
    Result<cache::shared::RedisReply> exists = fleet.redis().Command({"EXISTS", lease});
    if (exists && exists->integer == 1) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return false;
}

Joins MeasureJoins(int servers, const FleetConfig& config) {
  Joins out;
  Fleet fleet(servers, {});
  if (!fleet.ok()) return {.problem = fleet.problem()};
  const size_t a = 0, b = fleet.size() > 1 ? 1 : 0;
  // When each key's publish was heard, by key.
  std::mutex mu;
  std::map<std::string, FleetClock::time_point> heard;
  const cache::shared::RedisNode node = fleet.redis().node();
  cache::shared::FleetSubscriber events(
      [node]() { return cache::shared::RedisConnection::Connect(node, cache::shared::ConnectionOptions{}); },
      {.on_event =
           [&](const cache::shared::FleetEvent& event) {
             if (event.kind != cache::shared::FleetEventKind::kPublished) return;
             std::lock_guard lock(mu);
             heard.emplace(event.id.key.Hex(), FleetClock::now());
           },
       .on_subscribed = nullptr},
      cache::shared::FleetSubscriberOptions{.tick = std::chrono::milliseconds(5)});
  for (int i = 0; i < 500 && !events.subscribed(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  for (int j = 0; j < config.joins; ++j) {
    const std::string module = ChainedDotModule(3000 + j, config.join_dots);
    // The key, from an explain (which compiles nothing).
    const std::string key = Request(fleet.port(fleet.size() - 1), "POST", "/v1/explain", module, kTextBody).Text("key");
    const std::string lease = LeaseKeyOf(key);
    if (lease.empty()) return {.problem = "explain gave no key"};
    std::atomic<bool> a_done{false};
    FleetAnswer first;
    std::thread sender([&] {
      first = CompileOn(fleet.port(a), module);
      a_done = true;
    });
    const bool leased = WaitForLease(fleet, lease, a_done);
    const FleetAnswer second = CompileOn(fleet.port(b), module);
    sender.join();
    if (first.status != 200 || second.status != 200) {
      return {.problem = "a compile failed: " + first.error + second.error + first.Reason() + second.Reason()};
    }
    out.compile_ms.push_back(first.body.value("compile_ms", 0.0));
    out.executable_mb.push_back(first.body.value("executable_bytes", 0.0) / 1e6);
    const std::string outcome = second.Text("cache") + "/" + second.Text("tier") + (leased ? "" : " (no lease seen)");
    ++out.outcomes[outcome];
    if (second.Text("cache") != "joined") continue;
    out.gap_ms.push_back(MsBetween(first.at, second.at));
    std::lock_guard lock(mu);
    if (auto it = heard.find(key); it != heard.end()) out.after_publish_ms.push_back(MsBetween(it->second, second.at));
  }
  return out;
}

std::string Outcomes(const Joins& joins) {
  std::string text;
  for (const auto& [outcome, count] : joins.outcomes) text += (text.empty() ? "" : ", ") + outcome + " " + std::to_string(count);
  return text;
}

}  // namespace

std::vector<FleetRow> MeasureJoinedLatency(const FleetConfig& config) {
  const Joins fleet = MeasureJoins(config.servers, config);
  const Joins single = MeasureJoins(1, config);
  const std::string what = "3. joined answer after the leaseholder's (" + std::to_string(config.joins) +
                           " modules, compile p50 " + FleetNumber(FleetPercentile(fleet.compile_ms, 0.5), 0) +
                           " ms, " + FleetNumber(FleetPercentile(fleet.executable_mb, 0.5), 1) + " MB)";
  if (!fleet.problem.empty() || !single.problem.empty()) {
    return {{what, "not measured: " + fleet.problem + single.problem, "", "p99 <= 20 ms", false}};
  }
  auto spread = [](const std::vector<double>& ms) {
    return FleetNumber(FleetPercentile(ms, 0.5), 1) + " / " + FleetNumber(FleetPercentile(ms, 0.99), 1) + " / " +
           FleetNumber(FleetPercentile(ms, 1.0), 1);
  };
  const double p99 = FleetPercentile(fleet.after_publish_ms, 0.99);
  return {
      {what, "p99 " + FleetNumber(p99, 1) + " ms after the publish", "", "p99 <= 20 ms",
       !fleet.after_publish_ms.empty() && fleet.after_publish_ms.size() == fleet.gap_ms.size() && p99 <= 20},
      {"   after the publish: p50 / p99 / max (ms)", spread(fleet.after_publish_ms), "", "", std::nullopt},
      {"   after the leaseholder's answer: p50 / p99 / max (ms)", spread(fleet.gap_ms), spread(single.gap_ms), "",
       std::nullopt},
      {"   second request's answers (cache/tier)", Outcomes(fleet), Outcomes(single), "", std::nullopt},
  };
}

}  // namespace kiln::bench
