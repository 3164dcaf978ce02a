// The processes kiln_fleet_bench measures: a real redis-server on a free
// loopback port (cache/shared/testing/redis_server.h) and real `kiln serve`
// children sharing it with --shared (tests/kiln_serve_process.h; `kiln
// inspect` runs through tests/run_kiln.h), and the HTTP, /metrics and Redis
// reads the measures make of them.
//
// A Fleet owns its children: the destructor kills and reaps every server,
// then Redis, so a bench that stops early leaves none behind. Failures to
// start are values (Fleet::ok, Fleet::problem); a request that fails is a
// FleetAnswer with status 0 and the error in `error`. Header-only bench
// code. A Fleet is not thread-safe; the free request functions are (each
// opens its own connection); a FleetClient is one keep-alive connection,
// for one thread.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/version.h"
#include "cache/entry.h"
#include "cache/shared/shared_tier.h"
#include "cache/shared/testing/redis_server.h"
#include "server/http/testing/raw_http_client.h"

namespace kiln::bench {

// The `kiln` the fleet runs (and `kiln inspect` runs as): the one built
// beside the bench (KILN_BUILT_BINARY), or --kiln's. Set before any fleet
// starts; read-only after.
inline std::string& FleetKilnBinary() {
  static std::string path = KILN_BUILT_BINARY;
  return path;
}

}  // namespace kiln::bench

// What tests/kiln_serve_process.h and tests/run_kiln.h run.
#define KILN_BINARY (::kiln::bench::FleetKilnBinary().c_str())
#include "tests/kiln_serve_process.h"
#include "tests/run_kiln.h"

namespace kiln::bench {

using FleetClock = std::chrono::steady_clock;

inline double MsBetween(FleetClock::time_point from, FleetClock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// One answer as the bench sees it: status (0: no answer), the JSON body
// (null when it is not JSON), the round trip in ms and when it arrived.
struct FleetAnswer {
  int status = 0;
  nlohmann::json body;
  std::string error;  // why there is no answer
  double ms = 0;
  FleetClock::time_point at{};

  std::string Text(const char* field) const {
    return body.is_object() && body.contains(field) && body[field].is_string() ? body[field].get<std::string>() : "";
  }
  // The error reason of a 4xx/5xx answer ({"error": {"code": ...}}).
  std::string Reason() const {
    if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return "";
    const nlohmann::json& code = body["error"]["code"];
    return code.is_string() ? code.get<std::string>() : "";
  }
};

inline FleetAnswer AnswerOf(Result<http::testing::RawResponse> response, FleetClock::time_point start) {
  FleetAnswer answer;
  answer.at = FleetClock::now();
  answer.ms = MsBetween(start, answer.at);
  if (!response) {
    answer.error = response.error().ToString();
    return answer;
  }
  answer.status = response->status;
  answer.body = nlohmann::json::parse(response->body, nullptr, false);
  if (answer.body.is_discarded()) answer.body = nullptr;
  return answer;
}

inline constexpr std::string_view kTextBody = "Content-Type: text/plain\r\n";
inline constexpr std::string_view kJsonBody = "Content-Type: application/json\r\n";

// One request on a new connection.
inline FleetAnswer Request(uint16_t port, std::string_view method, std::string_view target, std::string_view body = {},
                           std::string_view headers = {},
                           std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const FleetClock::time_point start = FleetClock::now();
  return AnswerOf(http::testing::RoundTripOnce(port, method, target, body, headers, timeout), start);
}

inline FleetAnswer CompileOn(uint16_t port, std::string_view module) {
  return Request(port, "POST", "/v1/compile", module, kTextBody);
}

// A keep-alive connection to one server (reconnected after a failure), for
// polling without a connection per request.
class FleetClient {
 public:
  explicit FleetClient(uint16_t port) : port_(port) {}

  FleetAnswer RoundTrip(std::string_view method, std::string_view target, std::string_view body = {},
                        std::string_view headers = {}) {
    const FleetClock::time_point start = FleetClock::now();
    if (!client_) {
      Result<http::testing::RawHttpClient> connected =
          http::testing::RawHttpClient::Connect(port_, std::chrono::seconds(30));
      if (!connected) return AnswerOf(std::unexpected(connected.error()), start);
      client_.emplace(std::move(*connected));
    }
    Result<http::testing::RawResponse> response =
        client_->RoundTrip(http::testing::MakeRequest(method, target, body, headers));
    if (!response) client_.reset();
    return AnswerOf(std::move(response), start);
  }
  FleetAnswer Compile(std::string_view module) { return RoundTrip("POST", "/v1/compile", module, kTextBody); }

 private:
  uint16_t port_;
  std::optional<http::testing::RawHttpClient> client_;
};

// The sum of every series of metric `family` on a /metrics page ("name 3"
// and "name{...} 3" lines), only those whose labels contain `label` when
// given ("state=\"running\""); 0 when there is none.
inline double MetricSum(std::string_view page, std::string_view family, std::string_view label = {}) {
  double sum = 0;
  size_t at = 0;
  while (at < page.size()) {
    size_t end = page.find('\n', at);
    if (end == std::string_view::npos) end = page.size();
    const std::string_view line = page.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(family) || line.size() <= family.size()) continue;
    const char next = line[family.size()];
    if (next != ' ' && next != '{') continue;
    const size_t value_at = line.rfind(' ');
    const std::string_view labels = next == '{' ? line.substr(family.size(), value_at - family.size()) : "";
    if (!label.empty() && labels.find(label) == std::string_view::npos) continue;
    sum += std::strtod(std::string(line.substr(value_at + 1)).c_str(), nullptr);
  }
  return sum;
}

inline std::string MetricsPage(uint16_t port) {
  Result<http::testing::RawResponse> response =
      http::testing::RoundTripOnce(port, "GET", "/metrics", {}, {}, std::chrono::seconds(10));
  return response && response->status == 200 ? response->body : std::string();
}

// The Redis key of the default tenant's compile lease on v5e for `key_hex`
// (as a compile answer or an explain names it); empty for a bad key.
inline std::string LeaseKeyOf(const std::string& key_hex) {
  Result<hlo::Hash128> key = cache::ParseHash128(key_hex);
  if (!key) return "";
  return cache::shared::SharedTier::LeaseKey(cache::EntryId{"default", *key, "v5e", kCompilerFormatVersion});
}

// A redis-server and `servers` kiln servers on it (each with its own store
// in a temporary directory and `flags` after --shared URL --shared-lease
// --shared-timeout), or a problem saying what did not start.
class Fleet {
 public:
  Fleet(int servers, const std::vector<std::string>& flags) {
    if (!redis_.ok()) {
      problem_ = "cannot start redis-server (install it: scripts/setup.sh)";
      return;
    }
    for (int i = 0; i < servers; ++i) {
      std::vector<std::string> all = {"--shared",       redis_.url(), "--shared-lease", "2s",
                                      "--shared-timeout", "2s",       "--pool",         "v5e:1"};
      all.insert(all.end(), flags.begin(), flags.end());
      servers_.push_back(std::make_unique<api::testing::KilnServeProcess>(all));
      if (!servers_.back()->ok()) {
        problem_ = "kiln serve " + std::to_string(i) + " did not start: " + servers_.back()->output();
        return;
      }
    }
  }
  ~Fleet() {
    servers_.clear();  // each kills and reaps its child
    redis_.Kill();
  }
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  bool ok() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }
  size_t size() const { return servers_.size(); }
  uint16_t port(size_t i) const { return servers_[i]->port(); }
  api::testing::KilnServeProcess& server(size_t i) { return *servers_[i]; }
  cache::shared::testing::RedisServer& redis() { return redis_; }

  // Waits (up to `timeout`) until the servers have published `n` entries
  // to Redis between them (a compile is answered before its publish).
  bool WaitForPublishes(double n, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    for (const FleetClock::time_point give_up = FleetClock::now() + timeout; FleetClock::now() < give_up;) {
      double published = 0;
      for (size_t i = 0; i < size(); ++i) published += MetricSum(MetricsPage(port(i)), "kiln_shared_publishes_total");
      if (published >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  cache::shared::testing::RedisServer redis_;
  std::vector<std::unique_ptr<api::testing::KilnServeProcess>> servers_;
  std::string problem_;
};

}  // namespace kiln::bench
