// libFuzzer harness: the whole HTTP request path of `kiln serve`, as a
// client reaches it. One real KilnApi (a fresh store in a temporary
// directory, one simulated chip, bearer-token auth on) behind a real
// HttpServer on a loopback ephemeral port, started once; each input is the
// byte stream of one client connection: llhttp framing and the transport's
// own checks, headers, pipelining, chunked and zstd bodies, routing, query
// and path parameters, request contracts, auth, then the handlers (compile,
// explain, fetch, execute, stats, entries, metrics, ...).
//
// The connection's write side is closed after the input, so every request
// ends (answered, or 400 incomplete); the server must then close the
// connection. A crash, a sanitizer report, a leak or a connection the
// server never closes (__builtin_trap after kCloseTimeout) is a finding.
// Leaks are found at exit, once the server is torn down: scripts/fuzz.sh
// runs this harness with -detect_leaks=0, since the server's threads free
// one input's memory during the next and a per-input check would scan the
// whole heap every time.
//
// The transport's Connection is bound to its libuv TCP handle, so the
// harness drives it through a socket rather than a test seam in the server;
// http_request_fuzzer covers the request pieces without one, much faster.
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "server/api/auth.h"
#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/api/kiln_api.h"

namespace {

using namespace kiln;

// Seeds send "Authorization: Bearer fuzz-token" (tenant "fuzz", admin,
// allowed the shared namespace).
constexpr std::string_view kToken = "fuzz-token";
constexpr auto kCloseTimeout = std::chrono::seconds(20);

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "http_server_fuzzer: %s\n", message.c_str());
  std::abort();
}

class Server {
 public:
  Server() {
    // Under $TMPDIR (scripts/fuzz.sh points it into the build directory),
    // so a run that crashes leaves no store behind in /tmp.
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-fuzz-server-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) Die("mkdtemp failed");
    dir_ = pattern;

    api::ApiOptions options;
    options.db_path = dir_ / "kiln.db";
    // A tiny store (about 30 of the fuzzer's ~520-byte entries): eviction
    // runs all the time, and listings (/v1/entries, 100 entries by
    // default) stay short. With 4 MiB the store held thousands of entries
    // over a long run, and serializing listings under ASan took over half
    // of the harness's time (perf); with 64 KiB, still 43%.
    options.max_store_bytes = 16 << 10;
    options.pool_spec = "v5e:1";
    options.pool_queue_capacity = 8;
    options.compile_threads = 1;
    options.compile_queue_capacity = 16;
    options.program_cache_entries = 8;
    options.execute_step_budget = int64_t{1} << 22;
    options.execute_timeout = std::chrono::seconds(2);
    options.host_memory_bytes = 256 << 20;
    options.host_memory_wait = std::chrono::milliseconds(100);
    auto auth = api::Authenticator::Parse(api::HashToken(kToken) + " fuzz admin shared\n", "<fuzz>");
    if (!auth) Die(auth.error().message);
    options.auth = std::move(*auth);
    auto service = api::KilnApi::Create(std::move(options));
    if (!service) Die(service.error().message);
    service_ = std::move(*service);

    http::Router router;
    if (Status added = service_->RegisterRoutes(router); !added) Die(added.error().message);
    http::HttpServerOptions http_options;
    http_options.host = "127.0.0.1";
    http_options.port = 0;
    http_options.loops = 1;
    http_options.worker_threads = 2;
    http_options.max_body_bytes = 1 << 20;
    http_options.request_timeout = std::chrono::seconds(5);
    http_options.idle_timeout = std::chrono::seconds(5);
    http_options.shutdown_grace = std::chrono::seconds(1);
    http_options.metrics = &service_->metrics_registry();
    http_options.access_log = nullptr;
    http_ = std::make_unique<http::HttpServer>(std::move(http_options), std::move(router));
    if (Status started = http_->Start(); !started) Die(started.error().message);
  }

  ~Server() {
    http_.reset();
    service_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  uint16_t port() const { return http_->port(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<api::KilnApi> service_;
  std::unique_ptr<http::HttpServer> http_;
};

Server* TheServer() {
  static Server* server = [] {
    auto* created = new Server();
    // Stopped at exit so the store's directory goes away; the server's
    // threads are joined before the process ends.
    std::atexit([] { delete TheServer(); });
    return created;
  }();
  return server;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  TheServer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // libFuzzer's timeout alarm may interrupt connect(); try again then.
  auto client = http::testing::RawHttpClient::Connect(TheServer()->port(), kCloseTimeout);
  for (int attempt = 0; !client && attempt < 3; ++attempt) {
    client = http::testing::RawHttpClient::Connect(TheServer()->port(), kCloseTimeout);
  }
  if (!client) Die("connect: " + client.error().message);
  // The server may answer and close before reading everything: a failed
  // send is not a finding, a connection left open is.
  (void)client->Send(std::string_view(reinterpret_cast<const char*>(data), size));
  client->ShutdownWrite();
  if (!client->WaitForClose()) {
    std::fprintf(stderr, "http_server_fuzzer: the server kept the connection open for %llds "
                 "after the client's last byte\n", static_cast<long long>(kCloseTimeout.count()));
    __builtin_trap();
  }
  return 0;
}
