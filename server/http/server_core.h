// Internal to kiln_http: what every loop thread of one HttpServer shares.
//
// The options, the Router, the metrics registry and its transport series,
// the worker pool, the connection count the cap applies to and the
// server-wide draining flag. Created by HttpServer
// before any loop and destroyed after every loop; the worker pool is joined
// first (StopWorkers) so no task outlives the Router it routes with.
// Thread-safe: everything here is immutable, atomic or internally locked.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "base/status.h"
#include "server/http/http_server.h"
#include "base/metrics.h"
#include "server/http/router.h"
#include "base/worker_pool.h"

namespace kiln::http::internal {

class ServerLoop;

class ServerCore {
 public:
  ServerCore(HttpServerOptions options, Router router);
  ~ServerCore();

  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  // Fails on options that cannot work (zero limits, non-positive timeouts).
  static Status Validate(const HttpServerOptions& options);

  const HttpServerOptions& options() const { return options_; }
  const Router& router() const { return router_; }
  metrics::MetricsRegistry& metrics() { return *metrics_; }

  // Starts the worker threads; once, before any loop runs.
  void StartWorkers();
  // Queues a slow handler; false when the pool is saturated or stopped.
  bool SubmitToWorkers(WorkerPool::Task& task);
  // Discards queued tasks and joins the threads (waits for running ones).
  void StopWorkers();

  // Set once shutdown begins, on any loop or by HttpServer::Stop.
  bool draining() const { return draining_.load(std::memory_order_acquire); }
  void SetDraining() { draining_.store(true, std::memory_order_release); }

  // The server's loops, for shedding across them; set once, before any
  // loop runs.
  void SetLoops(std::vector<ServerLoop*> loops) { loops_ = std::move(loops); }

  // Counts a new connection against options().max_connections; false at
  // the cap. Every admitted connection is released once, as it closes.
  bool TryAdmitConnection();
  void ReleaseConnection() { admitted_.fetch_sub(1, std::memory_order_relaxed); }
  // Counts a new connection in the slot of one the loop just closed for it.
  void AdmitInPlaceOfShed() { admitted_.fetch_add(1, std::memory_order_relaxed); }
  // At the cap with no idle connection on `asking`: asks the loop with the
  // most idle connections to close its longest-idle one and admits the
  // newcomer meanwhile. Should that one have got busy in the meantime, the
  // next connection to fall idle on any loop closes instead (OverCap). The
  // cap is passed by at most one connection per loop. False (nothing
  // admitted) when no other loop has an idle connection or the cap is
  // already passed that far.
  bool AdmitBySheddingElsewhere(const ServerLoop& asking);
  // Asks the loop other than `asking` with the most idle connections to
  // close its longest-idle one (for a descriptor, or a newcomer admitted
  // past the cap); false when none has one or every loop is already asked.
  bool AskAnotherLoopToShed(const ServerLoop& asking);
  // Whether more connections are admitted than the cap allows, beyond
  // those a loop was asked to make room for and has not yet.
  bool OverCap() const {
    return options_.max_connections != 0 &&
           admitted_.load(std::memory_order_relaxed) >
               options_.max_connections + shed_requests_.load(std::memory_order_relaxed);
  }
  // Called by a loop once it has handled such a request.
  void ShedRequestDone() { shed_requests_.fetch_sub(1, std::memory_order_relaxed); }

  // The transport's series, shared by every loop.
  metrics::CounterFamily& requests_total() { return requests_total_; }
  metrics::HistogramFamily& request_seconds() { return request_seconds_; }
  metrics::Gauge& open_connections() { return open_connections_; }
  metrics::Counter& accepted_connections() { return accepted_connections_; }
  metrics::Counter& shed_connections() { return shed_connections_; }
  metrics::Counter& refused_connections() { return refused_connections_; }
  metrics::CounterFamily& accept_errors() { return accept_errors_; }
  metrics::Counter& accept_pauses() { return accept_pauses_; }

 private:
  const HttpServerOptions options_;
  const Router router_;
  std::unique_ptr<metrics::MetricsRegistry> owned_metrics_;
  metrics::MetricsRegistry* metrics_;
  metrics::CounterFamily& requests_total_;
  metrics::HistogramFamily& request_seconds_;
  metrics::Gauge& open_connections_;
  metrics::Counter& accepted_connections_;
  metrics::Counter& shed_connections_;
  metrics::Counter& refused_connections_;
  metrics::CounterFamily& accept_errors_;
  metrics::Counter& accept_pauses_;
  std::atomic<size_t> admitted_{0};
  std::vector<ServerLoop*> loops_;
  std::atomic<size_t> shed_requests_{0};  // outstanding AdmitBySheddingElsewhere
  std::unique_ptr<WorkerPool> workers_;
  std::atomic<bool> draining_{false};
};

}  // namespace kiln::http::internal
