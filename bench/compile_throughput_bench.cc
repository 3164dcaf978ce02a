// kiln_compile_throughput_bench: cold-compile throughput of `kiln serve`
// with many clients, against the same compiles run serially in-process.
//
//   kiln_compile_throughput_bench [--corpus DIR] [--clients 8,32] [--limit N]
//                                 [--compile-threads T]
//
// Baseline: every corpus module (corpus/hlo/*/*.hlo, sorted; the first N
// with --limit) parsed, verified and compiled by CompileModule one after
// the other on this thread; modules that fail are skipped from then on.
// Then, for each client count K, a fresh KilnApi on a fresh database
// behind an HttpServer on 127.0.0.1 (access log off) and K client threads
// on keep-alive connections that POST /v1/compile each remaining module
// once, so every request is a cold compile (a miss). Prints modules/s, MB/s
// of HLO text, p50/p99 request latency and the ratio of modules/s to the
// baseline. Never fails on timing; exit status 1 when the corpus cannot be
// read or the server cannot start.
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "compiler/driver/compile_module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "server/api/kiln_api.h"
#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using kiln::MsSince;

#ifndef KILN_CORPUS_DIR
#define KILN_CORPUS_DIR "../shared/corpus"
#endif

struct Module {
  std::string name;
  std::string text;
};

struct Run {
  double seconds = 0;
  size_t modules = 0;
  size_t failed = 0;
  uint64_t bytes = 0;
  std::vector<double> latencies_ms;
};

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

std::vector<Module> ReadCorpus(const fs::path& corpus, size_t limit) {
  std::vector<fs::path> paths;
  std::error_code error;
  for (const auto& dir : fs::directory_iterator(corpus / "hlo", error)) {
    if (!dir.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(dir.path(), error)) {
      if (file.path().extension() == ".hlo") paths.push_back(file.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  if (limit > 0 && paths.size() > limit) paths.resize(limit);
  std::vector<Module> modules;
  for (const fs::path& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    modules.push_back({path.parent_path().filename().string() + "/" + path.filename().string(), text.str()});
  }
  return modules;
}

// Serial in-process compiles; drops the modules that fail from `modules`.
Run CompileSerially(std::vector<Module>& modules) {
  Run run;
  std::vector<Module> compiled;
  kiln::driver::CompileOptions options;
  options.chip = "v5e";
  const Clock::time_point start = Clock::now();
  for (Module& module : modules) {
    const Clock::time_point one = Clock::now();
    auto parsed = kiln::hlo::ParseModule(module.text, module.name);
    if (!parsed || !kiln::hlo::VerifyModule(**parsed)) {
      ++run.failed;
      continue;
    }
    if (!kiln::driver::CompileModule(**parsed, options)) {
      ++run.failed;
      continue;
    }
    run.latencies_ms.push_back(MsSince(one));
    run.bytes += module.text.size();
    ++run.modules;
    compiled.push_back(std::move(module));
  }
  run.seconds = MsSince(start) / 1000;
  modules = std::move(compiled);
  return run;
}

// K clients POST every module once to a fresh server.
kiln::Result<Run> CompileOverHttp(const std::vector<Module>& modules, int clients, int compile_threads) {
  char pattern[] = "/tmp/kiln-throughput-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return kiln::InternalError("mkdtemp failed");
  const fs::path dir = pattern;
  Run run;
  {
    kiln::api::ApiOptions service_options;
    service_options.db_path = (dir / "kiln.db").string();
    service_options.pool_spec = "v5e:1";
    service_options.compile_threads = compile_threads;
    service_options.compile_queue_capacity = static_cast<size_t>(clients) * 4;
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::api::KilnApi> service,
                          kiln::api::KilnApi::Create(std::move(service_options)));
    kiln::http::Router router;
    KILN_RETURN_IF_ERROR(service->RegisterRoutes(router));
    kiln::http::HttpServerOptions http_options;
    http_options.port = 0;
    http_options.access_log = nullptr;
    http_options.worker_threads = std::max(4, clients);
    http_options.request_timeout = std::chrono::minutes(10);
    http_options.metrics = &service->metrics_registry();
    kiln::http::HttpServer server(std::move(http_options), std::move(router));
    KILN_RETURN_IF_ERROR(server.Start());

    std::atomic<size_t> next{0};
    std::mutex mu;
    std::vector<std::thread> threads;
    const Clock::time_point start = Clock::now();
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&] {
        auto client = kiln::http::testing::RawHttpClient::Connect(server.port(), std::chrono::minutes(10));
        std::vector<double> latencies;
        size_t failed = 0;
        uint64_t bytes = 0;
        for (size_t i = next++; i < modules.size(); i = next++) {
          const Clock::time_point one = Clock::now();
          bool ok = false;
          if (client) {
            auto response = client->RoundTrip(kiln::http::testing::MakeRequest("POST", "/v1/compile", modules[i].text,
                                                                               "Content-Type: text/plain\r\n"));
            ok = response && response->status == 200;
            if (!response)
              client = kiln::http::testing::RawHttpClient::Connect(server.port(), std::chrono::minutes(10));
          }
          if (!ok) {
            ++failed;
            continue;
          }
          latencies.push_back(MsSince(one));
          bytes += modules[i].text.size();
        }
        std::lock_guard lock(mu);
        run.latencies_ms.insert(run.latencies_ms.end(), latencies.begin(), latencies.end());
        run.failed += failed;
        run.bytes += bytes;
        run.modules += latencies.size();
      });
    }
    for (std::thread& thread : threads) thread.join();
    run.seconds = MsSince(start) / 1000;
    server.Stop();
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return run;
}

void Print(const char* label, const Run& run, double baseline_rate) {
  const double rate = run.seconds > 0 ? static_cast<double>(run.modules) / run.seconds : 0;
  std::printf("  %-22s %5zu modules  %7.2f s  %7.1f modules/s  %6.2f MB/s  p50 %8.2f ms  p99 %9.2f ms", label,
              run.modules, run.seconds, rate, static_cast<double>(run.bytes) / 1e6 / run.seconds,
              Percentile(run.latencies_ms, 0.5), Percentile(run.latencies_ms, 0.99));
  if (baseline_rate > 0) std::printf("  %.2fx", rate / baseline_rate);
  if (run.failed > 0) std::printf("  (%zu failed)", run.failed);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Cold-compile throughput of kiln serve with concurrent clients vs serial CompileModule");
  std::string corpus = fs::exists("../shared/corpus") ? "../shared/corpus" : KILN_CORPUS_DIR;
  std::vector<int> clients = {8, 32};
  size_t limit = 0;
  int compile_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--corpus", corpus, "Corpus directory (holds hlo/*/*.hlo)")->capture_default_str();
  app.add_option("--clients", clients, "Concurrent client counts, one server run each")->delimiter(',');
  app.add_option("--limit", limit, "Use only the first N modules (0: all)")->capture_default_str();
  app.add_option("--compile-threads", compile_threads, "The server's compile threads")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::vector<Module> modules = ReadCorpus(corpus, limit);
  if (modules.empty()) {
    std::fprintf(stderr, "no modules under %s/hlo\n", corpus.c_str());
    return 1;
  }
  const size_t total = modules.size();
  Run serial = CompileSerially(modules);
  std::printf("Cold compiles of %zu corpus modules (%zu more failed to compile and are skipped), %d compile threads\n",
              serial.modules, total - serial.modules, compile_threads);
  const double baseline_rate = static_cast<double>(serial.modules) / serial.seconds;
  Print("serial CompileModule", serial, 0);
  for (int k : clients) {
    kiln::Result<Run> run = CompileOverHttp(modules, k, compile_threads);
    if (!run) {
      std::fprintf(stderr, "server run with %d clients: %s\n", k, run.error().ToString().c_str());
      return 1;
    }
    const std::string label = "kiln serve, " + std::to_string(k) + " clients";
    Print(label.c_str(), *run, baseline_rate);
  }
  return 0;
}
