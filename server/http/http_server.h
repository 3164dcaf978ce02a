// The HTTP/1.1 server behind `kiln serve`.
//
// One libuv loop thread owns every socket: it accepts, parses with llhttp
// (one parser per connection), routes, and writes. Handlers marked kInline
// run on the loop; the rest run on a bounded worker pool and answer through
// their Responder (uv_async_send wakes the loop). Supported: keep-alive,
// pipelining (answered in order), chunked request bodies,
// Expect: 100-continue, zstd request bodies, zstd responses for clients that
// accept them, 413/431 size limits, request and idle timeouts, write
// backpressure, JSON errors, graceful shutdown, metrics and an access log.
//
// Lifetime: Start then Stop (tests, embedding), or Run (the command line),
// once per HttpServer. Both ignore SIGPIPE process-wide (writes to reset
// sockets must fail, not kill the process). Stop is safe from any thread except the loop thread
// and is idempotent; the destructor stops. port() is valid after a
// successful Start or once Run is listening.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "compiler/hlo/status.h"
#include "server/http/access_log.h"
#include "server/http/metrics.h"
#include "server/http/router.h"

namespace kiln::http {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: an ephemeral port, reported by port()
  int backlog = 511;

  size_t max_header_bytes = 64 << 10;  // request line + fields; beyond: 431
  size_t max_body_bytes = 256 << 20;   // after de-chunking and decoding; beyond: 413
  // From a request's first byte to its last; a slow client is answered 408
  // and cut off. Also bounds each response write: a client that stops
  // reading (or reads too slowly to take one write in time) is disconnected.
  std::chrono::milliseconds request_timeout{30'000};
  // A keep-alive connection with nothing in flight is closed after this.
  std::chrono::milliseconds idle_timeout{60'000};
  // SIGTERM/SIGINT/Stop: in-flight requests get this long, then sockets close.
  std::chrono::milliseconds shutdown_grace{10'000};

  int worker_threads = 4;
  size_t worker_queue_capacity = 1024;  // waiting slow requests; beyond: 503
  int retry_after_seconds = 1;          // on 503

  size_t max_pipelined_requests = 32;      // per connection, then reading pauses
  size_t max_write_queue_bytes = 8 << 20;  // per connection, then reading pauses

  size_t min_compress_bytes = 1024;  // smaller responses are never compressed
  int zstd_level = 1;

  // Not owned; must outlive the server. Null: the server owns one. To serve
  // GET /metrics, own the registry, pass it here and render it from a kInline
  // handler (RenderPrometheus, kPrometheusContentType).
  MetricsRegistry* metrics = nullptr;
  AccessLogSink access_log = StderrAccessLog();  // empty: no access log
};

namespace internal {
class ServerLoop;
}

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, Router router);
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens, then runs the loop on a background thread. Fails
  // (nothing left running) when the address cannot be bound.
  Status Start();
  // Graceful: stops accepting, lets in-flight requests finish within
  // shutdown_grace, closes every connection, joins the loop thread.
  void Stop();

  // Binds, listens and runs the loop on the calling thread until SIGTERM or
  // SIGINT (a second signal skips the grace period) or Stop from another
  // thread.
  Status Run();

  uint16_t port() const { return port_.load(); }
  MetricsRegistry& metrics();

 private:
  std::unique_ptr<internal::ServerLoop> loop_;
  std::atomic<uint16_t> port_{0};
  bool started_ = false;  // Start or Run was called
  std::thread loop_thread_;
};

}  // namespace kiln::http
