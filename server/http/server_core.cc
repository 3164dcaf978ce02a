#include "server/http/server_core.h"

#include "server/http/server_loop.h"

namespace kiln::http::internal {

ServerCore::ServerCore(HttpServerOptions options, Router router)
    : options_(std::move(options)),
      router_(std::move(router)),
      owned_metrics_(options_.metrics ? nullptr : std::make_unique<metrics::MetricsRegistry>()),
      metrics_(options_.metrics ? options_.metrics : owned_metrics_.get()),
      requests_total_(
          metrics_->AddCounter("kiln_http_requests_total",
                               "HTTP requests answered, by route pattern, method and status.",
                               {"route", "method", "status"})),
      request_seconds_(metrics_->AddHistogram(
          "kiln_http_request_duration_seconds",
          "Time from a request's first byte until its response is queued, by route pattern.",
          {"route"})),
      open_connections_(
          metrics_->AddGauge("kiln_http_open_connections", "Client connections currently open.")
              .WithLabels({})),
      accepted_connections_(
          metrics_
              ->AddCounter("kiln_http_accepted_connections_total", "Client connections accepted.")
              .WithLabels({})),
      shed_connections_(metrics_
                            ->AddCounter("kiln_http_shed_connections_total",
                                         "Idle keep-alive connections closed to make room for "
                                         "new ones (at the connection cap or out of descriptors).")
                            .WithLabels({})),
      refused_connections_(
          metrics_
              ->AddCounter("kiln_http_refused_connections_total",
                           "Connections answered 503 and closed at the connection cap.")
              .WithLabels({})),
      accept_errors_(metrics_->AddCounter("kiln_http_accept_errors_total",
                                          "accept() failures, by error (EMFILE, ENFILE, ...).",
                                          {"error"})),
      accept_pauses_(metrics_
                         ->AddCounter("kiln_http_accept_pauses_total",
                                      "Times a loop stopped accepting for a moment because "
                                      "accept() failed and nothing could be freed.")
                         .WithLabels({})) {
  metrics_
      ->AddGauge("kiln_http_max_connections",
                 "The connection cap (--max-connections); 0 when there is none.")
      .WithLabels({})
      .Set(static_cast<double>(options_.max_connections));
}

bool ServerCore::TryAdmitConnection() {
  const size_t cap = options_.max_connections;
  size_t admitted = admitted_.load(std::memory_order_relaxed);
  do {
    if (cap != 0 && admitted >= cap) return false;
  } while (!admitted_.compare_exchange_weak(admitted, admitted + 1, std::memory_order_relaxed));
  return true;
}

ServerCore::~ServerCore() { StopWorkers(); }

Status ServerCore::Validate(const HttpServerOptions& options) {
  if (options.max_pipelined_requests == 0 || options.max_write_queue_bytes == 0) {
    return InvalidArgumentError("HttpServerOptions: max_pipelined_requests and max_write_queue_bytes must be > 0");
  }
  if (options.request_timeout.count() <= 0 || options.idle_timeout.count() <= 0 ||
      options.shutdown_grace.count() < 0) {
    return InvalidArgumentError("HttpServerOptions: timeouts must be positive");
  }
  if (options.max_header_bytes == 0 || options.worker_threads <= 0 ||
      options.worker_queue_capacity == 0) {
    return InvalidArgumentError(
        "HttpServerOptions: max_header_bytes, worker_threads and worker_queue_capacity must be > "
        "0");
  }
  if (options.loops < 0) return InvalidArgumentError("HttpServerOptions: loops must be >= 0 (0: one per core)");
  return Ok();
}

bool ServerCore::AskAnotherLoopToShed(const ServerLoop& asking) {
  size_t outstanding = shed_requests_.load(std::memory_order_relaxed);
  do {
    if (outstanding >= loops_.size()) return false;
  } while (!shed_requests_.compare_exchange_weak(outstanding, outstanding + 1,
                                                 std::memory_order_relaxed));
  ServerLoop* lender = nullptr;
  size_t most_idle = 0;
  for (ServerLoop* loop : loops_) {
    if (loop == &asking || loop->idle_count() <= most_idle) continue;
    lender = loop;
    most_idle = loop->idle_count();
  }
  if (lender == nullptr || !lender->RequestShed()) {
    ShedRequestDone();
    return false;
  }
  return true;
}

bool ServerCore::AdmitBySheddingElsewhere(const ServerLoop& asking) {
  const size_t cap = options_.max_connections;
  if (cap == 0 || admitted_.load(std::memory_order_relaxed) >= cap + loops_.size()) return false;
  if (!AskAnotherLoopToShed(asking)) return false;
  admitted_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ServerCore::StartWorkers() {
  if (!workers_) {
    workers_ =
        std::make_unique<WorkerPool>(options_.worker_threads, options_.worker_queue_capacity);
  }
}

bool ServerCore::SubmitToWorkers(WorkerPool::Task& task) {
  return workers_ != nullptr && workers_->TrySubmit(task);
}

void ServerCore::StopWorkers() { workers_.reset(); }

}  // namespace kiln::http::internal
