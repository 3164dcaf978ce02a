// Measure 1: tuning runs per entry. Every server tunes compile misses in the
// background (--tune-in-background); each entry is compiled on every server
// (the first compiles it, the others get it from Redis or wait on the
// first's lease) and then a tune request for it goes to each server. Once
// no server has a job queued or running, the runs are the servers' ended
// jobs (kiln_tune_jobs_ended_total, any state) plus any still running or
// queued (kiln_tune_jobs), summed over the fleet. Target: one per entry.
#include <thread>

#include "bench/fleet_measures.h"
#include "bench/fleet_modules.h"
#include "bench/fleet_processes.h"

namespace kiln::bench {
namespace {

struct TuningRuns {
  std::string problem;  // empty: measured
  double runs = 0;
  std::string by_server;  // "a + b + c"
  int refused = 0;        // tune requests answered neither 200 nor 202
};

// A server's tuning runs: jobs ended in any state, and queued or running.
double TuningRunsOf(uint16_t port) {
  const std::string page = MetricsPage(port);
  return MetricSum(page, "kiln_tune_jobs_ended_total") + MetricSum(page, "kiln_tune_jobs");
}

TuningRuns CountTuningRuns(int servers, const FleetConfig& config) {
  TuningRuns out;
  const std::string budget = std::to_string(static_cast<int>(config.tune_seconds * 1000)) + "ms";
  Fleet fleet(servers, {"--tune-in-background", budget});
  if (!fleet.ok()) return {.problem = fleet.problem()};
  for (int e = 0; e < config.tune_entries; ++e) {
    const std::string module = FleetTunableModule(1000 + e);
    for (size_t s = 0; s < fleet.size(); ++s) {
      const FleetAnswer compiled = CompileOn(fleet.port(s), module);
      if (compiled.status != 200) return {.problem = "compile on server " + std::to_string(s) + ": " + compiled.error};
    }
    const nlohmann::json request = {{"hlo", module}, {"chip", "v5e"}, {"time_budget_s", config.tune_seconds}};
    for (size_t s = 0; s < fleet.size(); ++s) {
      const FleetAnswer started = Request(fleet.port(s), "POST", "/v1/tune", request.dump(), kJsonBody);
      out.refused += started.status != 200 && started.status != 202;
    }
  }
  // Until no server has a job queued or running (bounded).
  const FleetClock::time_point give_up = FleetClock::now() + std::chrono::seconds(120);
  while (FleetClock::now() < give_up) {
    double active = 0;
    for (size_t s = 0; s < fleet.size(); ++s) active += MetricSum(MetricsPage(fleet.port(s)), "kiln_tune_jobs");
    if (active == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (size_t s = 0; s < fleet.size(); ++s) {
    const double runs = TuningRunsOf(fleet.port(s));
    out.runs += runs;
    out.by_server += (s == 0 ? "" : " + ") + FleetNumber(runs, 0);
  }
  return out;
}

}  // namespace

std::vector<FleetRow> MeasureTuningRuns(const FleetConfig& config) {
  const TuningRuns fleet = CountTuningRuns(config.servers, config);
  const TuningRuns single = CountTuningRuns(1, config);
  const std::string what = "1. tuning runs per entry (" + std::to_string(config.tune_entries) +
                           " entries; background + a tune request to each)";
  if (!fleet.problem.empty() || !single.problem.empty()) {
    return {{what, "not measured: " + fleet.problem + single.problem, "", "1", false}};
  }
  const double per_entry = fleet.runs / config.tune_entries;
  std::vector<FleetRow> rows = {{what, FleetNumber(per_entry, 2), FleetNumber(single.runs / config.tune_entries, 2),
                                 "1", per_entry <= 1.0}};
  rows.push_back({"   runs by server (all entries)", fleet.by_server, single.by_server, "", std::nullopt});
  if (fleet.refused + single.refused > 0) {
    rows.push_back({"   tune requests refused", std::to_string(fleet.refused), std::to_string(single.refused), "",
                    std::nullopt});
  }
  return rows;
}

}  // namespace kiln::bench
