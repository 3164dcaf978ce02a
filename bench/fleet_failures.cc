// Measure 4: a failing module. A module that parses, verifies and plans but
// that buffer assignment refuses (a 37 GiB parameter: 422 does_not_fit) is
// sent --failures times, one request at a time, round robin over the
// servers. The compiles that ran are counted in Redis: every compile takes
// the module's compile lease first, so each compile is one "set" keyspace
// event on the lease key (notify-keyspace-events K$, added by the bench to
// what the servers set, and checked to be still on at the end). No
// metric counts failed compiles: kiln_compile_errors_total counts failed
// requests, answered from a compile or not. Target: one compile in all.
#include <map>
#include <optional>
#include <thread>

#include "bench/fleet_measures.h"
#include "bench/fleet_modules.h"
#include "bench/fleet_processes.h"
#include "cache/shared/redis_connection.h"

namespace kiln::bench {
namespace {

struct Failures {
  std::string problem;
  int compiles = 0;                    // lease takes
  std::map<std::string, int> answers;  // "422 does_not_fit"
  std::vector<double> ms;
  double errors_counted = 0;  // kiln_compile_errors_total over the servers
};

// Redis's notify-keyspace-events flags; nullopt when they cannot be read.
std::optional<std::string> KeyspaceEventFlags(Fleet& fleet) {
  Result<cache::shared::RedisReply> got = fleet.redis().Command({"CONFIG", "GET", "notify-keyspace-events"});
  if (!got || got->elements.size() != 2) return std::nullopt;
  return got->elements[1].text;
}

// Whether `flags` publish keyspace events of string commands (SET).
bool HasStringKeyspaceEvents(const std::string& flags) {
  return flags.find('K') != std::string::npos &&
         (flags.find('$') != std::string::npos || flags.find('A') != std::string::npos);
}

// Adds keyspace events of string commands to what the servers may have set
// for themselves (never taking theirs away).
bool TurnOnStringKeyspaceEvents(Fleet& fleet) {
  std::optional<std::string> flags = KeyspaceEventFlags(fleet);
  if (!flags) return false;
  if (HasStringKeyspaceEvents(*flags)) return true;
  if (flags->find('K') == std::string::npos) *flags += 'K';
  if (flags->find('$') == std::string::npos && flags->find('A') == std::string::npos) *flags += '$';
  Result<cache::shared::RedisReply> set = fleet.redis().Command({"CONFIG", "SET", "notify-keyspace-events", *flags});
  return set && !set->IsError();
}

Failures RunFailures(int servers, const FleetConfig& config) {
  Failures out;
  Fleet fleet(servers, {});
  if (!fleet.ok()) return {.problem = fleet.problem()};
  const std::string module = ChainedDotModule(4000, config.failure_dots, /*too_large=*/true);
  const std::string lease = LeaseKeyOf(Request(fleet.port(0), "POST", "/v1/explain", module, kTextBody).Text("key"));
  if (lease.empty()) return {.problem = "explain gave no key"};
  // After the servers started: added to what they set, and checked below.
  if (!TurnOnStringKeyspaceEvents(fleet)) return {.problem = "CONFIG SET notify-keyspace-events failed"};
  auto subscriber = cache::shared::RedisConnection::Connect(fleet.redis().node(), {});
  if (!subscriber) return {.problem = subscriber.error().ToString()};
  const std::string channel = "__keyspace@0__:" + lease;
  if (Status sent = (*subscriber)->Send({{"SUBSCRIBE", channel}}); !sent) return {.problem = sent.error().ToString()};
  auto confirmed = (*subscriber)->Receive(std::chrono::seconds(2));
  if (!confirmed || !*confirmed) return {.problem = "no SUBSCRIBE confirmation"};

  for (int r = 0; r < config.failures; ++r) {
    const FleetAnswer answer = CompileOn(fleet.port(static_cast<size_t>(r) % fleet.size()), module);
    ++out.answers[std::to_string(answer.status) + " " + (answer.status == 0 ? answer.error : answer.Reason())];
    out.ms.push_back(answer.ms);
  }
  // Every event of the requests answered (a lease is taken before its
  // compile's answer; a short wait for the last messages).
  for (;;) {
    auto message = (*subscriber)->Receive(std::chrono::milliseconds(300));
    if (!message) return {.problem = "the subscription broke: " + message.error().ToString()};
    if (!*message) break;
    const cache::shared::RedisReply& event = **message;
    if (event.elements.size() == 3 && event.elements[2].text == "set") ++out.compiles;
  }
  if (std::optional<std::string> flags = KeyspaceEventFlags(fleet); !flags || !HasStringKeyspaceEvents(*flags)) {
    return {.problem = "notify-keyspace-events was changed meanwhile; cannot count lease takes"};
  }
  for (size_t s = 0; s < fleet.size(); ++s) out.errors_counted += MetricSum(MetricsPage(fleet.port(s)), "kiln_compile_errors_total");
  return out;
}

std::string Answers(const Failures& failures) {
  std::string text;
  for (const auto& [answer, count] : failures.answers) text += (text.empty() ? "" : ", ") + answer + " x" + std::to_string(count);
  return text;
}

}  // namespace

std::vector<FleetRow> MeasureFailingModule(const FleetConfig& config) {
  const std::string what = "4. compiles of a failing module (" + std::to_string(config.failures) +
                           " requests round robin; leases taken)";
  const Failures fleet = RunFailures(config.servers, config);
  const Failures single = RunFailures(1, config);
  if (!fleet.problem.empty() || !single.problem.empty()) {
    return {{what, "not measured: " + fleet.problem + single.problem, "", "1", false}};
  }
  return {
      {what, std::to_string(fleet.compiles), std::to_string(single.compiles), "1", fleet.compiles == 1},
      {"   answers (status reason x count)", Answers(fleet), Answers(single), "", std::nullopt},
      {"   answer p50 / p99 (ms)",
       FleetNumber(FleetPercentile(fleet.ms, 0.5), 1) + " / " + FleetNumber(FleetPercentile(fleet.ms, 0.99), 1),
       FleetNumber(FleetPercentile(single.ms, 0.5), 1) + " / " + FleetNumber(FleetPercentile(single.ms, 0.99), 1), "",
       std::nullopt},
      {"   kiln_compile_errors_total (failed requests, summed)", FleetNumber(fleet.errors_counted, 0),
       FleetNumber(single.errors_counted, 0), "", std::nullopt},
  };
}

}  // namespace kiln::bench
