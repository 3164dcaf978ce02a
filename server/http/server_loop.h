// Internal to kiln_http: one loop thread's state behind HttpServer.
//
// Owns a uv loop, its listening socket, its connections, its response
// channel and its per-route instruments; shares the ServerCore (router,
// worker pool, metrics, the connection cap) with the server's other loops.
// At the cap (or when accept() finds no descriptor left) the loop closes its
// longest-idle keep-alive connection to make room, and only when it has none
// refuses the newcomer with a 503 (server_loop_accept.cc). Everything runs on
// the loop thread except Listen (before the loop runs, on any one thread),
// RequestStop (any thread) and the destructor (after Run returned, or if it
// never ran).
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "base/status.h"
#include "server/http/access_log.h"
#include "server/http/http_server.h"
#include "server/http/listen_socket.h"
#include "server/http/listener.h"
#include "base/metrics.h"
#include "server/http/response_channel.h"
#include "server/http/router.h"
#include "server/http/server_core.h"
#include "base/worker_pool.h"

namespace kiln::http::internal {

class Connection;
struct IdleListPlace;  // connection.h

class ServerLoop {
 public:
  explicit ServerLoop(ServerCore& core);
  ~ServerLoop();

  ServerLoop(const ServerLoop&) = delete;
  ServerLoop& operator=(const ServerLoop&) = delete;

  // Creates the loop's handles, binds and listens on `port` (0: an
  // ephemeral one) in `role` (listen_socket.h: the first loop of a
  // multi-loop server opens the address to the others, and fails when
  // another process listens there); returns the bound port. Ignores SIGPIPE
  // process-wide, so a write to a reset socket fails with EPIPE instead of
  // killing the process.
  Result<uint16_t> Listen(uint16_t port, ListenRole role);
  // Makes SIGINT and SIGTERM call `on_signal` (false the first time, true
  // after: skip the grace period). Call after Listen, on the thread that
  // will Run.
  Status WatchSignals(std::function<void(bool second)> on_signal);
  // Runs the loop on the calling thread until shutdown completes.
  void Run();
  // Begins a graceful shutdown (`force`: close every connection now); any
  // thread; idempotent; a no-op once the loop has finished.
  void RequestStop(bool force = false);
  // Asks the loop to close its longest-idle connection for a newcomer on
  // another loop (ServerCore::AdmitBySheddingElsewhere); any thread. False
  // once the loop has finished.
  bool RequestShed();
  // How many of its connections are idle; any thread (a moment's figure).
  size_t idle_count() const { return idle_count_.load(std::memory_order_relaxed); }

  // --- For Connection, on the loop thread. ---
  const HttpServerOptions& options() const { return core_.options(); }
  const Router& router() const { return core_.router(); }
  uv_loop_t* loop() { return &loop_; }
  const std::shared_ptr<ResponseChannel>& channel() const { return channel_; }
  // Queues a slow handler; false when the pool is saturated.
  bool SubmitToWorkers(WorkerPool::Task& task) { return core_.SubmitToWorkers(task); }
  // The current time as an HTTP date, re-formatted at most once a second.
  std::string_view Date();
  // One 64 KiB buffer shared by all reads: each read is parsed before the next.
  uv_buf_t ReadBuffer() { return uv_buf_init(read_buffer_.get(), kReadBufferBytes); }
  bool draining() const { return draining_; }
  // Whether an access-log line should be formatted at all.
  bool access_log_enabled() const { return static_cast<bool>(core_.options().access_log); }
  // Metrics and access log for one answered request.
  void RecordRequest(const AccessRecord& record);
  // Called by a Connection whenever it may have become idle (waiting for a
  // request, nothing in flight: Connection::IsIdle) or busy; `place` is the
  // connection's own. Moves it between the lists without allocating.
  void UpdateIdle(Connection& connection, IdleListPlace& place);
  // Called by a Connection as it starts closing: it leaves the lists and no
  // longer counts against the connection cap.
  void OnConnectionClosing(IdleListPlace& place);
  // Called by a Connection once both of its handles closed; destroys it.
  void OnConnectionClosed(uint64_t id);

 private:
  static constexpr size_t kReadBufferBytes = 64 << 10;

  struct Instruments {
    metrics::Counter* requests;
    metrics::Histogram* latency;
  };

  static void OnWake(uv_async_t* handle);
  static void OnSignal(uv_signal_t* handle, int signum);
  static void OnGraceExpired(uv_timer_t* timer);
  // server_loop_accept.cc: admission, shedding and refusal.
  void Accept(uv_stream_t* server);
  // Counts a newcomer against the cap, making room if need be; false when
  // it must be refused.
  bool Admit();
  void HandleAcceptError(int status);
  // Closes the longest-idle connection; false when none is idle.
  bool ShedOldestIdle();
  // Accepts the pending connection only to answer 503 and close it.
  void Refuse(uv_stream_t* server);
  void HandleWake();
  void Deliver(Completion completion);
  void BeginShutdown();
  void ForceCloseConnections();
  void MaybeFinishShutdown();
  Instruments& InstrumentsFor(std::string_view route, std::string_view method, int status);

  ServerCore& core_;
  // Per loop, so recording needs no lock: the series are looked up once per
  // (route, method, status) and then updated with atomics.
  std::map<std::tuple<std::string_view, std::string_view, int>, Instruments> instruments_;

  uv_loop_t loop_{};
  bool loop_initialized_ = false;
  Listener listener_;
  uv_timer_t grace_timer_{};
  uv_signal_t sigint_{};
  uv_signal_t sigterm_{};
  bool signals_started_ = false;
  std::function<void(bool second)> on_signal_;

  // Wakes the loop for a stop or shed request from any thread while open.
  uv_async_t wake_async_{};
  std::mutex wake_mu_;
  bool wake_open_ = false;  // guarded by wake_mu_
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> force_stop_{false};
  std::atomic<int> shed_requests_{0};

  std::shared_ptr<ResponseChannel> channel_;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  // Every open connection is in one of these: idle_ (longest idle first)
  // or busy_; it moves between them with splice, twice a request.
  std::list<Connection*> idle_;
  std::list<Connection*> busy_;
  std::atomic<size_t> idle_count_{0};  // idle_.size(), for other loops
  uint64_t next_connection_id_ = 1;
  bool draining_ = false;
  bool finished_ = false;

  std::unique_ptr<char[]> read_buffer_;
  std::string date_;
  uint64_t date_second_ = 0;
};

}  // namespace kiln::http::internal
