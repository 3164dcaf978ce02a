// The shared tier's hit against a local one, over real corpus modules.
//
//   kiln_shared_tier_bench [--corpus DIR] [--modules N]
//
// Starts a redis-server on a free loopback port and two kiln services (A
// and B, each with its own SQLite store, both with --shared on it) behind
// real HTTP servers. For each module: A compiles it (a miss, published),
// B answers it from Redis (the cross-server hit: fetch, verify, keep
// locally), then each answers it again (a local hit, the baseline, on the
// same keep-alive connection), and A answers it once more in a body it has
// not seen (a local hit that parses and fingerprints, as a cross-server hit
// must). Prints p50/p90 of each and the ratios.
// Never fails on timing; exit status 1 only when it cannot set up.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/shared/testing/redis_server.h"
#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/api/kiln_api.h"

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using kiln::http::testing::MakeRequest;
using kiln::http::testing::RawHttpClient;

namespace {

// One kiln service behind an HTTP server, with a keep-alive client.
struct Server {
  fs::path dir;
  std::unique_ptr<kiln::api::KilnApi> service;
  std::unique_ptr<kiln::http::HttpServer> http;
  std::optional<RawHttpClient> client;

  bool Start(const std::string& redis_url) {
    char pattern[] = "/tmp/kiln-shared-bench-XXXXXX";
    dir = mkdtemp(pattern);
    kiln::api::ApiOptions options;
    options.db_path = dir / "kiln.db";
    options.pool_spec = "v5e:1";
    kiln::cache::shared::SharedTierOptions shared;
    auto url = kiln::cache::shared::ParseRedisUrl(redis_url);
    if (!url) return false;
    shared.url = *url;
    options.shared = shared;
    auto created = kiln::api::KilnApi::Create(std::move(options));
    if (!created) {
      std::fprintf(stderr, "%s\n", created.error().ToString().c_str());
      return false;
    }
    service = std::move(*created);
    kiln::http::Router router;
    if (!service->RegisterRoutes(router)) return false;
    kiln::http::HttpServerOptions http_options;
    http_options.host = "127.0.0.1";
    http_options.port = 0;
    http_options.access_log = nullptr;
    http_options.max_body_bytes = uint64_t{1} << 30;
    http = std::make_unique<kiln::http::HttpServer>(std::move(http_options), std::move(router));
    if (!http->Start()) return false;
    auto connected = RawHttpClient::Connect(http->port(), std::chrono::seconds(120));
    if (!connected) return false;
    client.emplace(std::move(*connected));
    return true;
  }
  ~Server() {
    client.reset();
    http.reset();
    service.reset();
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }

  // The compile's answer and its round-trip time in ms.
  std::pair<nlohmann::json, double> Compile(const std::string& module) {
    const auto start = Clock::now();
    auto response = client->RoundTrip(MakeRequest("POST", "/v1/compile", module, "Content-Type: text/plain\r\n"));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!response || response->status != 200) return {nlohmann::json::object(), ms};
    nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
    return {body.is_object() ? body : nlohmann::json::object(), ms};
  }
};

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The shared tier's cross-server hit against a local hit"};
  std::string corpus = fs::is_directory("../shared/corpus/hlo") ? "../shared/corpus" : KILN_CORPUS_DIR;
  size_t max_modules = 80;
  app.add_option("--corpus", corpus, "The HLO corpus");
  app.add_option("--modules", max_modules, "Modules to use (smallest first)");
  CLI11_PARSE(app, argc, argv);

  kiln::cache::shared::testing::RedisServer redis;
  if (!redis.ok()) {
    std::fprintf(stderr, "cannot start redis-server (install it: scripts/setup.sh)\n");
    return 1;
  }
  Server a, b;
  if (!a.Start(redis.url()) || !b.Start(redis.url())) {
    std::fprintf(stderr, "cannot start the kiln services\n");
    return 1;
  }

  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(fs::path(corpus) / "hlo", ec); it != fs::end(it); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".hlo") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end(), [](const fs::path& x, const fs::path& y) {
    return fs::file_size(x) != fs::file_size(y) ? fs::file_size(x) < fs::file_size(y) : x < y;
  });
  // Every size: spread the picks over the sorted list.
  std::vector<fs::path> picked;
  const size_t count = std::min(max_modules, files.size());
  for (size_t i = 0; i < count; ++i) {
    const fs::path& file = files[i * files.size() / count];
    if (picked.empty() || picked.back() != file) picked.push_back(file);
  }

  std::vector<double> miss_ms, shared_ms, local_a_ms, local_b_ms, parsed_ms, bytes;
  for (const fs::path& file : picked) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string module = text.str();
    auto [compiled, miss] = a.Compile(module);
    if (compiled.value("cache", "") != "miss") continue;  // a failing or repeated module
    auto [fetched, shared] = b.Compile(module);
    if (fetched.value("tier", "") != "shared") {
      std::fprintf(stderr, "%s: B answered %s/%s, not a shared hit\n", file.filename().c_str(),
                   fetched.value("cache", "?").c_str(), fetched.value("tier", "?").c_str());
      continue;
    }
    auto [hit_a, local_a] = a.Compile(module);
    auto [hit_b, local_b] = b.Compile(module);
    // The same module in a body not seen before (one more newline): a local
    // hit that parses and fingerprints, as the cross-server hit must.
    auto [hit_parsed, local_parsed] = a.Compile(module + "\n");
    if (hit_parsed.value("cache", "") == "hit") parsed_ms.push_back(local_parsed);
    miss_ms.push_back(miss);
    shared_ms.push_back(shared);
    local_a_ms.push_back(local_a);
    local_b_ms.push_back(local_b);
    bytes.push_back(fetched.value("executable_bytes", 0.0));
  }
  if (shared_ms.empty()) {
    std::fprintf(stderr, "no module compiled\n");
    return 1;
  }
  std::printf("modules: %zu (executables p50 %.0f KiB, max %.0f KiB)\n", shared_ms.size(),
              Percentile(bytes, 0.5) / 1024, Percentile(bytes, 1.0) / 1024);
  std::printf("%-36s %10s %10s\n", "round trip (ms)", "p50", "p90");
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("%-36s %10.3f %10.3f\n", name, Percentile(v, 0.5), Percentile(v, 0.9));
  };
  row("local hit on A (baseline)", local_a_ms);
  row("local hit on B (after the fetch)", local_b_ms);
  row("local hit on A, new body (parsed)", parsed_ms);
  row("cross-server hit on B (Redis)", shared_ms);
  row("miss on A (compile + publish)", miss_ms);
  // The large executables alone (a real model's): where the bytes dominate.
  std::vector<double> big_local, big_shared, big_miss;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] < 256 * 1024) continue;
    big_local.push_back(local_a_ms[i]);
    big_shared.push_back(shared_ms[i]);
    big_miss.push_back(miss_ms[i]);
  }
  if (!big_shared.empty()) {
    std::printf("executables of 256 KiB or more (%zu):\n", big_shared.size());
    row("  local hit on A", big_local);
    row("  cross-server hit on B", big_shared);
    row("  miss on A", big_miss);
  }
  std::printf("cross-server hit / local hit: p50 %.1fx, p90 %.1fx\n", Percentile(shared_ms, 0.5) / Percentile(local_a_ms, 0.5),
              Percentile(shared_ms, 0.9) / Percentile(local_a_ms, 0.9));
 std::printf("cross-server hit / parsed local hit: p50 %.1fx, p90 %.1fx\n",
              Percentile(shared_ms, 0.5) / Percentile(parsed_ms, 0.5), Percentile(shared_ms, 0.9) / Percentile(parsed_ms, 0.9));
  std::printf("miss / cross-server hit:      p50 %.1fx, p90 %.1fx\n", Percentile(miss_ms, 0.5) / Percentile(shared_ms, 0.5),
              Percentile(miss_ms, 0.9) / Percentile(shared_ms, 0.9));
  const kiln::cache::shared::SharedCounters counters = b.service->engine().shared_tier()->Counters();
  std::printf("B's shared tier: %lld hits, %lld misses, %lld errors\n", static_cast<long long>(counters.hits),
              static_cast<long long>(counters.misses), static_cast<long long>(counters.errors));
  return 0;
}
