#include "server/http/http_server.h"

#include "server/http/server_loop.h"

namespace kiln::http {

HttpServer::HttpServer(HttpServerOptions options, Router router)
    : loop_(std::make_unique<internal::ServerLoop>(std::move(options), std::move(router))) {}

HttpServer::~HttpServer() { Stop(); }

MetricsRegistry& HttpServer::metrics() { return loop_->metrics(); }

Status HttpServer::Start() {
  if (started_) return MakeError("HttpServer::Start: the server was already started");
  started_ = true;
  KILN_ASSIGN_OR_RETURN(uint16_t port, loop_->Listen());
  port_.store(port);
  loop_thread_ = std::thread([this] { loop_->Run(); });
  return Ok();
}

void HttpServer::Stop() {
  loop_->RequestStop();
  if (loop_thread_.joinable() && loop_thread_.get_id() != std::this_thread::get_id()) {
    loop_thread_.join();
  }
}

Status HttpServer::Run() {
  if (started_) return MakeError("HttpServer::Run: the server was already started");
  started_ = true;
  KILN_ASSIGN_OR_RETURN(uint16_t port, loop_->Listen());
  KILN_RETURN_IF_ERROR(loop_->WatchSignals());
  port_.store(port);  // only now: a signal sent after seeing the port is handled
  loop_->Run();
  return Ok();
}

}  // namespace kiln::http
