// Measure 2: a tuned plan everywhere. For each entry, one server (the
// tuner, in turn) compiles it and every other server compiles it too, so
// each holds the heuristic entry; then a tune request goes to the tuner.
// From the moment the bench sees the tuner's job done with stored=true,
// each other server's POST /v1/compile of the module is polled (at most
// every --poll-ms per server and entry) until it answers plan "tuned", or
// --cap seconds pass (then it did not switch). Entries are tuned and polled
// --window at a time, so a server that never switches costs one cap per
// window, not per entry. Target: p99 <= 1 s.
#include <cmath>
#include <limits>
#include <thread>

#include "bench/fleet_measures.h"
#include "bench/fleet_modules.h"
#include "bench/fleet_processes.h"

namespace kiln::bench {
namespace {

enum class Step { kSubmit, kTuning, kSpreading, kDone };

struct TrackedEntry {
  std::string module;
  size_t tuner = 0;
  Step step = Step::kSubmit;
  std::string job;
  FleetClock::time_point submitted{}, stored_at{};
  std::vector<bool> waiting;  // per server: an other server not yet answering the tuned plan
};

struct Spread {
  std::string problem;
  std::vector<double> ms;  // other servers' answers of the tuned plan, after the store
  int not_switched = 0;    // answers still heuristic at the cap
  int not_tuned = 0;       // entries whose tuning stored nothing (left out)
  int tuned_before = 0;    // other servers answering tuned before the tuning (left out)
  double rounds = 0, round_ms = 0;
};

std::string PlanOf(const FleetAnswer& answer) { return answer.status == 200 ? answer.Text("plan") : "error"; }

// One step of `entry`: a request to its tuner, or one compile on each other
// server still answering the heuristic plan.
void Advance(TrackedEntry& entry, std::vector<FleetClient>& clients, const FleetConfig& config, Spread& out) {
  const FleetClock::time_point now = FleetClock::now();
  switch (entry.step) {
    case Step::kSubmit: {
      const nlohmann::json request = {{"hlo", entry.module}, {"chip", "v5e"}, {"time_budget_s", config.tune_seconds}};
      const FleetAnswer started = clients[entry.tuner].RoundTrip("POST", "/v1/tune", request.dump(), kJsonBody);
      if (started.status == 429 || started.status == 503) return;  // the tuner's queue is full: next round
      if (started.status != 200 && started.status != 202) {
        ++out.not_tuned;
        entry.step = Step::kDone;
        return;
      }
      entry.job = started.Text("id");
      entry.submitted = now;
      entry.step = Step::kTuning;
      return;
    }
    case Step::kTuning: {
      const FleetAnswer job = clients[entry.tuner].RoundTrip("GET", "/v1/tune/" + entry.job);
      const std::string state = job.Text("state");
      if (state == "done" && job.body.value("stored", false)) {
        entry.stored_at = job.at;
        entry.step = Step::kSpreading;
        Advance(entry, clients, config, out);  // the other servers at once
        return;
      }
      if (state == "done" || state == "failed" || state == "cancelled" ||
          now - entry.submitted > std::chrono::seconds(120)) {
        ++out.not_tuned;
        entry.step = Step::kDone;
      }
      return;
    }
    case Step::kSpreading: {
      int left = 0;
      for (size_t s = 0; s < clients.size(); ++s) {
        if (!entry.waiting[s]) continue;
        const FleetAnswer answer = clients[s].Compile(entry.module);
        if (PlanOf(answer) == "tuned") {
          out.ms.push_back(MsBetween(entry.stored_at, answer.at));
          entry.waiting[s] = false;
        } else {
          ++left;
        }
      }
      if (left > 0 && MsBetween(entry.stored_at, FleetClock::now()) > config.cap_s * 1000) {
        out.not_switched += left;
        left = 0;
      }
      if (left == 0) entry.step = Step::kDone;
      return;
    }
    case Step::kDone:
      return;
  }
}

Spread MeasureSpread(const FleetConfig& config) {
  Spread out;
  Fleet fleet(config.servers, {});
  if (!fleet.ok()) return {.problem = fleet.problem()};
  std::vector<FleetClient> clients;
  for (size_t s = 0; s < fleet.size(); ++s) clients.emplace_back(fleet.port(s));
  for (int first = 0; first < config.entries; first += config.window) {
    std::vector<TrackedEntry> wave;
    for (int i = first; i < std::min(config.entries, first + config.window); ++i) {
      TrackedEntry entry{.module = FleetTunableModule(2000 + i), .tuner = static_cast<size_t>(i) % fleet.size()};
      entry.waiting.assign(fleet.size(), false);
      // The tuner compiles it first; then every other server holds it.
      if (PlanOf(clients[entry.tuner].Compile(entry.module)) != "heuristic") {
        return {.problem = "the tuner's compile did not answer the heuristic plan"};
      }
      for (size_t s = 0; s < fleet.size(); ++s) {
        if (s == entry.tuner) continue;
        const std::string plan = PlanOf(clients[s].Compile(entry.module));
        if (plan == "tuned") ++out.tuned_before;
        if (plan == "heuristic") entry.waiting[s] = true;
      }
      wave.push_back(std::move(entry));
    }
    const FleetClock::time_point wave_start = FleetClock::now();
    for (bool busy = true; busy;) {
      const FleetClock::time_point round = FleetClock::now();
      busy = false;
      for (TrackedEntry& entry : wave) {
        Advance(entry, clients, config, out);
        busy = busy || entry.step != Step::kDone;
      }
      out.rounds += 1;
      out.round_ms += MsBetween(round, FleetClock::now());
      std::this_thread::sleep_until(round + std::chrono::microseconds(static_cast<int64_t>(config.poll_ms * 1000)));
      if (FleetClock::now() - wave_start > std::chrono::minutes(5)) {
        return {.problem = "a window of entries took more than 5 minutes"};
      }
    }
  }
  return out;
}

}  // namespace

std::vector<FleetRow> MeasureTunedEverywhere(const FleetConfig& config) {
  const std::string what = "2. other servers answer the tuned plan, after its store";
  const Spread spread = MeasureSpread(config);
  if (!spread.problem.empty()) return {{what, "not measured: " + spread.problem, "", "p99 <= 1 s", false}};
  // An answer that never switched counts as later than any that did.
  std::vector<double> all = spread.ms;
  all.insert(all.end(), spread.not_switched, std::numeric_limits<double>::infinity());
  const int answers = static_cast<int>(all.size());
  auto ms_text = [&](double ms) { return std::isinf(ms) ? ">" + FleetNumber(config.cap_s * 1000, 0) : FleetNumber(ms, 1); };
  const double p99 = FleetPercentile(all, 0.99);
  int within_1s = 0;
  for (double ms : spread.ms) within_1s += ms <= 1000;
  std::vector<FleetRow> rows = {
      {what + " (" + std::to_string(config.entries - spread.not_tuned) + " entries, " + std::to_string(answers) +
           " answers)",
       "p99 " + ms_text(p99) + " ms" + (std::isinf(p99) ? " (cap)" : ""), "n/a", "p99 <= 1 s",
       answers > 0 && p99 <= 1000},
      {"   p50 / p99 / max (ms)",
       ms_text(FleetPercentile(all, 0.5)) + " / " + ms_text(p99) + " / " + ms_text(FleetPercentile(all, 1.0)), "", "",
       std::nullopt},
      {"   answered the tuned plan within 1 s", std::to_string(within_1s) + " of " + std::to_string(answers), "",
       "all", answers > 0 && within_1s == answers},
      {"   still heuristic at the " + FleetNumber(config.cap_s, 0) + " s cap",
       std::to_string(spread.not_switched) + " of " + std::to_string(answers), "", "", std::nullopt},
      {"   poll round (mean ms of requests; at least --poll-ms)",
       FleetNumber(spread.rounds > 0 ? spread.round_ms / spread.rounds : 0, 1), "", "", std::nullopt},
  };
  if (spread.not_tuned > 0) {
    rows.push_back({"   entries whose tuning stored nothing (left out)", std::to_string(spread.not_tuned), "", "",
                    std::nullopt});
  }
  if (spread.tuned_before > 0) {
    rows.push_back({"   answers already tuned before the tuning (left out)", std::to_string(spread.tuned_before), "",
                    "", std::nullopt});
  }
  return rows;
}

}  // namespace kiln::bench
