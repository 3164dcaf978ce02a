// A fleet of kiln servers on one Redis, measured as issue 51 asks.
//
//   kiln_fleet_bench [--parts 1,2,3,4,5] [--entries 100] [--window 24]
//                    [--cap 5] [--poll-ms 10] [--tune-entries 3]
//                    [--tune-seconds 0.5] [--joins 30] [--join-dots 4000]
//                    [--failures 100] [--failure-dots 1000] [--kiln PATH]
//
// Starts real redis-server and `kiln serve` processes on 127.0.0.1 (each
// measure on a fleet of its own, fleet_measures.h says what each does) and
// prints one table: each figure of three servers on one Redis beside one
// server's where one makes sense, the target and whether it is met. Never
// fails on a figure (exit 0 whether targets are met or not); exit 1 only
// for bad flags. About two minutes with the defaults; the flags shrink it.
#include <cstdio>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "bench/fleet_measures.h"
#include "bench/fleet_processes.h"

namespace kiln::bench {

std::string FleetNumber(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

namespace {

void PrintRows(const std::vector<FleetRow>& rows) {
  for (const FleetRow& row : rows) {
    std::string verdict;
    if (row.met) verdict = *row.met ? "target met" : "not met";
    std::printf("%-80s  %-24s  %-22s  %-12s  %s\n", row.measure.c_str(), row.fleet.c_str(), row.single.c_str(),
                row.target.c_str(), verdict.c_str());
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  using namespace kiln::bench;
  CLI::App app{"Three kiln servers on one Redis against one server: tuning, tuned plans, joins, failures, explain"};
  FleetConfig config;
  std::string parts = "1,2,3,4,5";
  app.add_option("--parts", parts, "Measures to run, comma-separated (1-5)");
  app.add_option("--entries", config.entries, "Measure 2: entries tuned")->check(CLI::PositiveNumber);
  app.add_option("--window", config.window, "Measure 2: entries tuned and polled at once")->check(CLI::PositiveNumber);
  app.add_option("--cap", config.cap_s, "Measure 2: seconds after which a server still answering the heuristic plan "
                                        "never switched")->check(CLI::PositiveNumber);
  app.add_option("--poll-ms", config.poll_ms, "Measure 2: least ms between two compiles of one entry on one server");
  app.add_option("--tune-entries", config.tune_entries, "Measure 1: entries")->check(CLI::PositiveNumber);
  app.add_option("--tune-seconds", config.tune_seconds, "Tuning budget of background tuning and each tune request")
      ->check(CLI::PositiveNumber);
  app.add_option("--joins", config.joins, "Measure 3: modules")->check(CLI::PositiveNumber);
  app.add_option("--join-dots", config.join_dots, "Measure 3: chained dots of the slow module")->check(CLI::PositiveNumber);
  app.add_option("--failures", config.failures, "Measure 4: requests")->check(CLI::PositiveNumber);
  app.add_option("--failure-dots", config.failure_dots, "Measure 4: chained dots of the failing module")
      ->check(CLI::PositiveNumber);
  app.add_option("--kiln", FleetKilnBinary(), "The kiln binary to serve with (default: the one built with the bench)");
  CLI11_PARSE(app, argc, argv);
  std::set<std::string> wanted;
  std::stringstream list(parts);
  for (std::string part; std::getline(list, part, ',');) wanted.insert(part);

  std::printf("kiln_fleet_bench: %d kiln servers on one redis-server (127.0.0.1) against one server; tuning budget "
              "%.2f s; %s\n\n",
              config.servers, config.tune_seconds, FleetKilnBinary().c_str());
  std::printf("%-80s  %-24s  %-22s  %-12s  %s\n", "measure", "3 servers, one Redis", "1 server", "target", "");
  using Measure = std::vector<FleetRow> (*)(const FleetConfig&);
  const std::pair<const char*, Measure> measures[] = {{"1", MeasureTuningRuns},
                                                      {"2", MeasureTunedEverywhere},
                                                      {"3", MeasureJoinedLatency},
                                                      {"4", MeasureFailingModule},
                                                      {"5", MeasureExplain}};
  for (const auto& [name, measure] : measures) {
    if (wanted.contains(name)) PrintRows(measure(config));
  }
  return 0;
}
