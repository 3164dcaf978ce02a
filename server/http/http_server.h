// The HTTP/1.1 server behind `kiln serve`.
//
// Each libuv loop thread owns its sockets: it accepts, parses with llhttp
// (one parser per connection), routes, and writes. Handlers marked kInline
// (and routes' inline fast paths) run on the loop; the rest run on one
// bounded worker pool and answer through their Responder (uv_async_send
// wakes the connection's loop).
//
// The "one libuv loop thread" became "one loop thread per core"
// (HttpServerOptions::loops): a hit answered from memory costs the loop
// little CPU of its own, but the kernel's TCP send path runs on the thread
// that writes, so one loop thread saturates one core while the others idle
// (nginx, the bench's baseline, runs a worker process per core for the same
// reason). With loops > 1 every loop binds its own listening socket to the
// same address with SO_REUSEPORT, and the kernel spreads new connections
// over them; a connection stays on the loop that accepted it. The Router,
// the worker pool and the metrics are shared. The first socket is bound
// without SO_REUSEPORT, so a server never shares its address with another
// process (listen_socket.h): Start fails naming the holder instead.
//
// Bodies are never copied in user space: a response's shared bytes go out
// with one writev together with its head (and the heads and bodies of the
// other ready pipelined responses). (sendfile from a sealed memfd was
// measured too: on loopback it cost more kernel time per 256 KiB response
// than writev's copy, so it is not used.)
//
// Supported: keep-alive, pipelining (answered in order), chunked request bodies,
// Expect: 100-continue, zstd request bodies, zstd responses for clients that
// accept them, 413/431 size limits, request and idle timeouts, write
// backpressure, a connection cap, JSON errors, graceful shutdown, metrics and
// an access log.
// Framing is strict (request_framing.h): anything two HTTP parsers could
// read differently (overrunning chunks, obs-fold, spaces in header names or
// empty ones, Content-Length beside Transfer-Encoding or repeated, a missing
// or repeated Host, a repeated Content-Type, a request line without a
// version) is answered 400 and the connection closed; a chunk whose declared
// size would pass max_body_bytes is answered 413 before its data is read.
//
// Lifetime: Start then Stop (tests, embedding), or Run (the command line),
// once per HttpServer. Both ignore SIGPIPE process-wide (writes to reset
// sockets must fail, not kill the process). Stop is safe from any thread
// except a loop thread (with Run: once port() is nonzero) and is idempotent;
// the destructor stops. port(), loop_count() and draining() are valid after
// a successful Start or once Run is listening.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/http/access_log.h"
#include "base/metrics.h"
#include "server/http/router.h"

namespace kiln::http {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: an ephemeral port, reported by port()
  int backlog = 511;
  // Loop threads. 1: one socket bound as usual. More: each loop listens on
  // its own SO_REUSEPORT socket (shared with this server's loops only).
  // 0: one per core (std::thread::hardware_concurrency).
  int loops = 1;

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

  // Open client connections across every loop; 0: no cap. At the cap a
  // loop closes its longest-idle keep-alive connection for a newcomer, and
  // answers 503 (then closes) when it has none idle. Size it below the
  // process's descriptor limit (RLIMIT_NOFILE) less what the rest of the
  // process needs; should accept() still run out of descriptors, idle
  // connections are closed the same way, or accepting pauses a moment.
  size_t max_connections = 0;
  size_t max_pipelined_requests = 32;      // per connection, then reading pauses
  size_t max_write_queue_bytes = 8 << 20;  // per connection, then reading pauses

  size_t min_compress_bytes = 1024;  // smaller responses are never compressed
  int zstd_level = 1;

  // Not owned; must outlive the server. Null: the server owns one. To serve
  // GET /metrics, own the registry, pass it here and render it from a kInline
  // handler (RenderPrometheus, kPrometheusContentType).
  metrics::MetricsRegistry* metrics = nullptr;
  AccessLogSink access_log = StderrAccessLog();  // empty: no access log
};

namespace internal {
class ServerCore;
class ServerLoop;
}  // namespace internal

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, Router router);
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Fails when another socket already listens on `host`:`port`, naming the
  // process that holds it when /proc says; Ok for port 0. For refusing early
  // (before opening a store): Start binds its first socket the same way, so
  // that check is the one that cannot race.
  static Status CheckAddressFree(const std::string& host, uint16_t port);

  // Binds and listens, then runs the loops on background threads. Fails
  // (nothing left running) when the address cannot be bound or another
  // process listens there.
  Status Start();
  // Graceful: stops accepting, lets in-flight requests finish within
  // shutdown_grace, closes every connection, joins the loop threads.
  void Stop();

  // Binds, listens and runs the first loop on the calling thread (the
  // others on background threads) until SIGTERM or SIGINT (a second signal
  // skips the grace period) or Stop from another thread.
  Status Run();

  uint16_t port() const { return port_.load(); }
  // The number of loop threads (after Start: `loops` resolved).
  int loop_count() const { return static_cast<int>(loops_.size()); }
  // True from the moment a graceful shutdown begins (Stop, a signal) until
  // the server is destroyed. Any thread.
  bool draining() const;
  metrics::MetricsRegistry& metrics();

 private:
  // Validates the options, creates and binds every loop, starts the
  // workers; returns the bound port.
  Result<uint16_t> Listen();
  void StopAll(bool force);
  void JoinAll();

  std::unique_ptr<internal::ServerCore> core_;
  std::vector<std::unique_ptr<internal::ServerLoop>> loops_;
  std::vector<std::thread> threads_;  // one per loop run in the background
  std::atomic<uint16_t> port_{0};
  bool started_ = false;  // Start or Run was called
};

}  // namespace kiln::http
