#include "server/http/http_server.h"

#include <unistd.h>

#include <algorithm>

#include "server/http/listen_socket.h"
#include "server/http/server_core.h"
#include "server/http/server_loop.h"

namespace kiln::http {
namespace {

int ResolveLoopCount(int loops) {
  if (loops > 0) return loops;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, Router router)
    : core_(std::make_unique<internal::ServerCore>(std::move(options), std::move(router))) {}

HttpServer::~HttpServer() {
  Stop();
  // Workers first: a task still running routes with the core's Router and
  // answers through a loop's channel, which drops it once the loop closed.
  core_->StopWorkers();
  loops_.clear();
}

metrics::MetricsRegistry& HttpServer::metrics() { return core_->metrics(); }

bool HttpServer::draining() const { return core_->draining(); }

Result<uint16_t> HttpServer::Listen() {
  const HttpServerOptions& options = core_->options();
  KILN_RETURN_IF_ERROR(internal::ServerCore::Validate(options));
  const int count = ResolveLoopCount(options.loops);
  uint16_t port = options.port;
  for (int i = 0; i < count; ++i) {
    auto loop = std::make_unique<internal::ServerLoop>(*core_);
    using internal::ListenRole;
    const ListenRole role =
        count == 1 ? ListenRole::kAlone : (i == 0 ? ListenRole::kFirstOfGroup : ListenRole::kMember);
    Result<uint16_t> bound = loop->Listen(port, role);
    loops_.push_back(std::move(loop));  // destroyed with the server even on failure
    if (!bound) {
      loops_.clear();  // none has run: each closes its own handles
      return std::unexpected(bound.error());
    }
    port = *bound;  // an ephemeral port: the other loops join the one the first got
  }
  std::vector<internal::ServerLoop*> loops;
  for (auto& loop : loops_) loops.push_back(loop.get());
  core_->SetLoops(std::move(loops));
  core_->StartWorkers();
  return port;
}

Status HttpServer::CheckAddressFree(const std::string& host, uint16_t port) {
  if (port == 0) return Ok();
  KILN_ASSIGN_OR_RETURN(sockaddr_storage address, internal::ResolveListenAddress(host, port));
  KILN_ASSIGN_OR_RETURN(uv_os_sock_t probe,
                        internal::BindListenSocket(*reinterpret_cast<const sockaddr*>(&address),
                                                   internal::ListenRole::kAlone));
  ::close(probe);
  return Ok();
}

Status HttpServer::Start() {
  if (started_) return FailedPreconditionError("HttpServer::Start: the server was already started");
  started_ = true;
  KILN_ASSIGN_OR_RETURN(uint16_t port, Listen());
  port_.store(port);
  for (auto& loop : loops_) {
    threads_.emplace_back([raw = loop.get()] { raw->Run(); });
  }
  return Ok();
}

void HttpServer::StopAll(bool force) {
  core_->SetDraining();
  for (auto& loop : loops_) loop->RequestStop(force);
}

void HttpServer::JoinAll() {
  for (std::thread& thread : threads_) {
    if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
  }
}

void HttpServer::Stop() {
  if (!loops_.empty()) StopAll(/*force=*/false);
  JoinAll();
}

Status HttpServer::Run() {
  if (started_) return FailedPreconditionError("HttpServer::Run: the server was already started");
  started_ = true;
  KILN_ASSIGN_OR_RETURN(uint16_t port, Listen());
  KILN_RETURN_IF_ERROR(
      loops_.front()->WatchSignals([this](bool second) { StopAll(/*force=*/second); }));
  for (size_t i = 1; i < loops_.size(); ++i) {
    threads_.emplace_back([raw = loops_[i].get()] { raw->Run(); });
  }
  // Only now: a signal sent after seeing the port is handled.
  port_.store(port);
  loops_.front()->Run();
  JoinAll();
  return Ok();
}

}  // namespace kiln::http
