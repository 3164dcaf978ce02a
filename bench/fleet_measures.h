// The five measures of kiln_fleet_bench (issue 51), each run on a fleet of
// its own (three `kiln serve` on one redis-server) and, where a figure
// makes sense for one server, on one server with its own Redis:
//
//   MeasureTuningRuns       tuning runs per entry with background tuning on
//                           and a tune request for the entry sent to each
//                           server (fleet_tuning_runs.cc)
//   MeasureTunedEverywhere  how long after the tuning server stored a tuned
//                           replacement every other server's compile
//                           answers it (fleet_tuned_everywhere.cc)
//   MeasureJoinedLatency    a compile that waited on another server's lease:
//                           its answer after the leaseholder's (fleet_joins.cc)
//   MeasureFailingModule    compiles run for a module the compiler refuses,
//                           sent round robin (fleet_failures.cc)
//   MeasureExplain          whether explain names the changed instruction on
//                           entries from Redis and from a bundle
//                           (fleet_explain.cc)
//
// Each returns the rows it prints: a failure to set up is a row saying so,
// never an exception or an exit. Not thread-safe (each starts and stops its
// own processes); run one at a time.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace kiln::bench {

struct FleetConfig {
  int servers = 3;
  int tune_entries = 3;           // measure 1
  double tune_seconds = 0.5;      // --tune-in-background and each tune request's budget
  int entries = 100;              // measure 2
  int window = 24;                // measure 2: entries tuned and polled at once
  double cap_s = 5;               // measure 2: a server not answering the tuned plan by then never did
  double poll_ms = 10;            // measure 2: each server's compile at most this often per entry
  int joins = 30;                 // measure 3
  int join_dots = 4000;           // measure 3: the slow module's chained dots
  int failures = 100;             // measure 4
  int failure_dots = 1000;        // measure 4: the failing module's chained dots
};

// One printed line: what, the fleet's figure, one server's ("" when none
// makes sense), the target ("" for a line of detail), whether it is met.
struct FleetRow {
  std::string measure;
  std::string fleet;
  std::string single;
  std::string target;
  std::optional<bool> met;
};

std::vector<FleetRow> MeasureTuningRuns(const FleetConfig& config);
std::vector<FleetRow> MeasureTunedEverywhere(const FleetConfig& config);
std::vector<FleetRow> MeasureJoinedLatency(const FleetConfig& config);
std::vector<FleetRow> MeasureFailingModule(const FleetConfig& config);
std::vector<FleetRow> MeasureExplain(const FleetConfig& config);

// The p-quantile (0..1) of `values` (nearest rank); 0 for none.
inline double FleetPercentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(values.size() - 1, rank)];
}

std::string FleetNumber(double value, int decimals = 1);

}  // namespace kiln::bench
