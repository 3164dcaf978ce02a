// A real HttpServer on 127.0.0.1 with an ephemeral port, for tests.
//
// Options default to short timeouts and a captured access log. Start() fails
// the calling test (gtest ASSERT) when the server cannot listen. Header-only
// so it stays out of kiln_http.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"

namespace kiln::http::testing {

// Lines the server wrote to its access log; thread-safe.
class CapturedLog {
 public:
  AccessLogSink Sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(line);
    };
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

inline HttpServerOptions TestOptions() {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.worker_threads = 4;
  options.request_timeout = std::chrono::seconds(5);
  options.idle_timeout = std::chrono::seconds(5);
  options.shutdown_grace = std::chrono::seconds(5);
  options.access_log = nullptr;
  return options;
}

// A gate slow handlers wait on, so tests order events without sleeping.
class Gate {
 public:
  void Open() { promise_.set_value(); }
  // Bounded, so a broken test cannot hang: false when the gate stayed shut.
  bool Wait() const {
    return opened_.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  }

 private:
  std::promise<void> promise_;
  std::shared_future<void> opened_ = promise_.get_future().share();
};

// POST /body (worker pool) answers the request body and counts its calls
// in `calls`, which must outlive the router; GET /echo (inline) answers "ok".
inline Router CountingEchoRouter(std::atomic<int>& calls) {
  Router router;
  EXPECT_TRUE(router.Add("POST", "/body", SyncHandler([&calls](const Request& request) {
                           calls.fetch_add(1);
                           return Response::Text(200, request.body);
                         })));
  EXPECT_TRUE(router.Add("GET", "/echo",
                         SyncHandler([](const Request&) { return Response::Text(200, "ok"); }),
                         Execution::kInline));
  return router;
}

// A raw client connected to `port`; a failure to connect fails the test.
inline RawHttpClient ConnectOrFail(uint16_t port) {
  Result<RawHttpClient> client = RawHttpClient::Connect(port);
  EXPECT_TRUE(client) << client.error().ToString();
  return std::move(*client);
}

// Starts `router` behind a server; null (and a test failure) on error.
inline std::unique_ptr<HttpServer> StartServer(HttpServerOptions options, Router router) {
  auto server = std::make_unique<HttpServer>(std::move(options), std::move(router));
  Status started = server->Start();
  EXPECT_TRUE(started) << (started ? "" : started.error().ToString());
  if (!started || server->port() == 0) return nullptr;
  return server;
}

}  // namespace kiln::http::testing
