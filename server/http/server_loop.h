// Internal to kiln_http: the loop thread's state behind HttpServer.
//
// Owns the uv loop, the listening socket, the connections, the response
// channel and the worker pool. Everything runs on the loop thread except
// Listen (before the loop runs, on any one thread), RequestStop (any thread)
// and the destructor (after Run returned, or if it never ran).
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "compiler/hlo/status.h"
#include "server/http/access_log.h"
#include "server/http/http_server.h"
#include "server/http/metrics.h"
#include "server/http/response_channel.h"
#include "server/http/router.h"
#include "server/http/worker_pool.h"

namespace kiln::http::internal {

class Connection;

class ServerLoop {
 public:
  ServerLoop(HttpServerOptions options, Router router);
  ~ServerLoop();

  ServerLoop(const ServerLoop&) = delete;
  ServerLoop& operator=(const ServerLoop&) = delete;

  // Checks the options, creates the loop's handles, binds and listens;
  // returns the bound port. Ignores SIGPIPE process-wide, so a write to a
  // reset socket fails with EPIPE instead of killing the process.
  Result<uint16_t> Listen();
  // Makes SIGINT and SIGTERM begin a graceful shutdown (a second one skips
  // the grace period). Call after Listen, on the thread that will Run.
  Status WatchSignals();
  // Runs the loop on the calling thread until shutdown completes.
  void Run();
  // Begins a graceful shutdown; any thread; idempotent; a no-op once the
  // loop has finished.
  void RequestStop();

  MetricsRegistry& metrics() { return *metrics_; }

  // --- For Connection, on the loop thread. ---
  const HttpServerOptions& options() const { return options_; }
  const Router& router() const { return router_; }
  uv_loop_t* loop() { return &loop_; }
  const std::shared_ptr<ResponseChannel>& channel() const { return channel_; }
  // Queues a slow handler; false when the pool is saturated.
  bool SubmitToWorkers(WorkerPool::Task& task);
  // The current time as an HTTP date, re-formatted at most once a second.
  std::string_view Date();
  // One 64 KiB buffer shared by all reads: each read is parsed before the next.
  uv_buf_t ReadBuffer() { return uv_buf_init(read_buffer_.get(), kReadBufferBytes); }
  bool draining() const { return draining_; }
  // Metrics and access log for one answered request.
  void RecordRequest(const AccessRecord& record);
  // Called by a Connection once both of its handles closed; destroys it.
  void OnConnectionClosed(uint64_t id);

 private:
  static constexpr size_t kReadBufferBytes = 64 << 10;

  struct Instruments {
    Counter* requests;
    Histogram* latency;
  };

  static void OnNewConnection(uv_stream_t* listener, int status);
  static void OnStopAsync(uv_async_t* handle);
  static void OnSignal(uv_signal_t* handle, int signum);
  static void OnGraceExpired(uv_timer_t* timer);
  void Accept();
  void Deliver(Completion completion);
  void BeginShutdown();
  void ForceCloseConnections();
  void MaybeFinishShutdown();
  Instruments& InstrumentsFor(std::string_view route, std::string_view method, int status);

  const HttpServerOptions options_;
  const Router router_;
  std::unique_ptr<MetricsRegistry> owned_metrics_;
  MetricsRegistry* metrics_;
  CounterFamily& requests_total_;
  HistogramFamily& request_seconds_;
  Gauge& open_connections_;
  Counter& accepted_connections_;
  std::map<std::tuple<std::string_view, std::string_view, int>, Instruments> instruments_;

  uv_loop_t loop_{};
  bool loop_initialized_ = false;
  uv_tcp_t listener_{};
  uv_timer_t grace_timer_{};
  uv_signal_t sigint_{};
  uv_signal_t sigterm_{};
  bool signals_started_ = false;

  // The stop async may be signalled from any thread while it is open.
  uv_async_t stop_async_{};
  std::mutex stop_mu_;
  bool stop_async_open_ = false;  // guarded by stop_mu_

  std::shared_ptr<ResponseChannel> channel_;
  std::unique_ptr<WorkerPool> workers_;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t next_connection_id_ = 1;
  bool draining_ = false;
  bool finished_ = false;

  std::unique_ptr<char[]> read_buffer_;
  std::string date_;
  uint64_t date_second_ = 0;
};

}  // namespace kiln::http::internal
