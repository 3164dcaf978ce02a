// kiln_stats_bench: what GET /v1/stats and GET /metrics cost as the store
// grows, against the full scan they used to run, in the same process.
//
//   kiln_stats_bench [--sizes 1000,32000] [--requests 300] [--dir /tmp]
//
// For each size, a fresh store gets that many entries of tenant `default`
// (the namespace of a server without auth) on two chips; then a KilnApi
// behind an HttpServer on 127.0.0.1 answers --requests round trips of each
// route on one keep-alive connection. Printed per size: p50 and mean of
// /healthz (the transport alone), /v1/stats and /metrics over HTTP, and of
// the old computation run directly on the same file (listing the tenant's
// entries a page at a time plus the count(*) scan of the whole table). The
// target: the routes' cost does not grow with the store. Never fails on
// timing.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cache/cache_store.h"
#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/api/kiln_api.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using kiln::Result;
using kiln::Status;

struct Figure {
  double p50_us = 0;
  double mean_us = 0;
};

Figure Summarize(std::vector<double> micros) {
  if (micros.empty()) return {};
  std::sort(micros.begin(), micros.end());
  return {micros[micros.size() / 2], std::accumulate(micros.begin(), micros.end(), 0.0) / micros.size()};
}

Result<Figure> TimeIt(int repetitions, const std::function<Status()>& run) {
  std::vector<double> micros;
  for (int i = 0; i < repetitions; ++i) {
    const Clock::time_point start = Clock::now();
    KILN_RETURN_IF_ERROR(run());
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return Summarize(std::move(micros));
}

Status Fill(const std::string& path, uint64_t entries) {
  kiln::cache::CacheStoreOptions options;
  options.path = path;
  options.hot_set_bytes = 0;
  options.dictionary_training_puts = 0;
  KILN_ASSIGN_OR_RETURN(auto store, kiln::cache::CacheStore::Open(std::move(options)));
  std::string executable(1500, 'x');
  for (uint64_t i = 0; i < entries; ++i) {
    std::snprintf(executable.data(), 32, "executable %llu", static_cast<unsigned long long>(i));
    kiln::cache::PutRequest put;
    put.id = {"default", kiln::hlo::Hash128{i * 0x9e3779b97f4a7c15ULL + 1, i}, i % 2 == 0 ? "v5e" : "v6e"};
    put.options = R"({"options":{"plan":"heuristic","scoped_vmem_bytes":0},"kernels":1,"parameters":[]})";
    put.executable = executable;
    put.compile_seconds = 2;
    KILN_RETURN_IF_ERROR(store->Put(put));
  }
  return kiln::Ok();
}

// What /v1/stats did before running totals: every entry of the tenant, a
// page at a time, summed per chip; then the store's count(*) scan.
Status OldStatsScan(kiln::cache::CacheStore& store, kiln::cache::Connection& raw, bool with_listing) {
  if (with_listing) {
    kiln::cache::ListFilter filter{.tenant = std::string("default"), .limit = 1000};
    uint64_t bytes = 0;
    while (true) {
      KILN_ASSIGN_OR_RETURN(std::vector<kiln::cache::EntryMetadata> page, store.List(filter));
      if (page.empty()) break;
      for (const auto& entry : page) bytes += entry.stored_bytes;
      filter.after_row_id = page.back().row_id;
      if (page.size() < 1000) break;
    }
    if (bytes == 0) return kiln::InternalError("the listing found nothing");
  }
  KILN_ASSIGN_OR_RETURN(kiln::cache::Statement totals,
                        raw.Prepare("SELECT count(*), total(quarantined), total(raw_bytes), total(stored_bytes) "
                                    "FROM entries"));
  KILN_ASSIGN_OR_RETURN(bool row, totals.Step());
  if (!row) return kiln::InternalError("count(*) returned no row");
  return kiln::Ok();
}

struct SizeFigures {
  uint64_t entries = 0;
  Figure health, stats, metrics, old_stats, old_metrics;
};

Result<SizeFigures> Measure(const fs::path& dir, uint64_t entries, int requests) {
  SizeFigures figures{.entries = entries};
  const std::string path = (dir / ("kiln-stats-bench-" + std::to_string(entries) + ".db")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  KILN_RETURN_IF_ERROR(Fill(path, entries));

  kiln::api::ApiOptions service_options;
  service_options.db_path = path;
  service_options.pool_spec = "v5e:1";
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::api::KilnApi> service,
                        kiln::api::KilnApi::Create(std::move(service_options)));
  kiln::http::Router router;
  KILN_RETURN_IF_ERROR(service->RegisterRoutes(router));
  kiln::http::HttpServerOptions http_options;
  http_options.host = "127.0.0.1";
  http_options.port = 0;
  http_options.access_log = nullptr;
  http_options.metrics = &service->metrics_registry();
  kiln::http::HttpServer server(std::move(http_options), std::move(router));
  KILN_RETURN_IF_ERROR(server.Start());
  KILN_ASSIGN_OR_RETURN(auto client, kiln::http::testing::RawHttpClient::Connect(server.port(), std::chrono::seconds(30)));
  auto get = [&client](const char* target) -> Status {
    KILN_ASSIGN_OR_RETURN(auto response, client.RoundTrip(kiln::http::testing::MakeRequest("GET", target, "", "")));
    if (response.status != 200)
      return kiln::InternalError(std::string(target) + " answered " + std::to_string(response.status));
    return kiln::Ok();
  };
  // Warm up (page caches, the totals snapshot), then time.
  for (const char* target : {"/healthz", "/v1/stats", "/metrics"}) KILN_RETURN_IF_ERROR(get(target));
  KILN_ASSIGN_OR_RETURN(figures.health, TimeIt(requests, [&] { return get("/healthz"); }));
  KILN_ASSIGN_OR_RETURN(figures.stats, TimeIt(requests, [&] { return get("/v1/stats"); }));
  KILN_ASSIGN_OR_RETURN(figures.metrics, TimeIt(requests, [&] { return get("/metrics"); }));

  kiln::cache::CacheStoreOptions options;
  options.path = path;
  options.dictionary_training_puts = 0;
  KILN_ASSIGN_OR_RETURN(auto store, kiln::cache::CacheStore::Open(std::move(options)));
  KILN_ASSIGN_OR_RETURN(auto raw, kiln::cache::Connection::Open(path, {.read_only = true}));
  const int old_requests = std::max(10, requests / 10);
  KILN_ASSIGN_OR_RETURN(figures.old_stats, TimeIt(old_requests, [&] { return OldStatsScan(*store, *raw, true); }));
  KILN_ASSIGN_OR_RETURN(figures.old_metrics, TimeIt(old_requests, [&] { return OldStatsScan(*store, *raw, false); }));
  server.Stop();
  return figures;
}

std::vector<uint64_t> ParseSizes(const std::string& text) {
  std::vector<uint64_t> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::stoull(item));
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln_stats_bench: /v1/stats and /metrics cost against the old full scan"};
  std::string sizes_text = "1000,32000";
  int requests = 300;
  std::string dir = fs::temp_directory_path().string();
  app.add_option("--sizes", sizes_text, "store sizes (entries), comma-separated");
  app.add_option("--requests", requests, "timed round trips per route and size");
  app.add_option("--dir", dir, "where to put the benchmark databases");
  CLI11_PARSE(app, argc, argv);

  std::vector<SizeFigures> all;
  for (uint64_t entries : ParseSizes(sizes_text)) {
    Result<SizeFigures> figures = Measure(dir, entries, requests);
    if (!figures) {
      std::fprintf(stderr, "kiln_stats_bench: %s\n", figures.error().ToString().c_str());
      return 1;
    }
    all.push_back(*figures);
  }
  std::printf("GET /v1/stats and /metrics over HTTP (one keep-alive connection), microseconds p50 / mean;\n"
              "'old scan' is the per-request work they did before running totals, on the same file\n\n");
  std::printf("%8s  %17s  %17s  %17s  %19s  %19s\n", "entries", "/healthz", "/v1/stats", "/metrics",
              "old /v1/stats scan", "old /metrics scan");
  for (const SizeFigures& f : all) {
    std::printf("%8llu  %8.0f /%7.0f  %8.0f /%7.0f  %8.0f /%7.0f  %9.0f /%8.0f  %9.0f /%8.0f\n",
                static_cast<unsigned long long>(f.entries), f.health.p50_us, f.health.mean_us, f.stats.p50_us,
                f.stats.mean_us, f.metrics.p50_us, f.metrics.mean_us, f.old_stats.p50_us, f.old_stats.mean_us,
                f.old_metrics.p50_us, f.old_metrics.mean_us);
  }
  if (all.size() >= 2) {
    const SizeFigures& small = all.front();
    const SizeFigures& large = all.back();
    std::printf("\n%llu/%llu entries p50 ratio: /v1/stats %.2fx, /metrics %.2fx (target ~1x); "
                "old scans %.1fx and %.1fx\n",
                static_cast<unsigned long long>(large.entries), static_cast<unsigned long long>(small.entries),
                large.stats.p50_us / small.stats.p50_us, large.metrics.p50_us / small.metrics.p50_us,
                large.old_stats.p50_us / small.old_stats.p50_us, large.old_metrics.p50_us / small.old_metrics.p50_us);
  }
  return 0;
}
