#include "server/http/server_loop.h"

#include <unistd.h>

#include <csignal>
#include <ctime>

#include "server/http/connection.h"
#include "server/http/listen_socket.h"
#include "base/str_cat.h"

namespace kiln::http::internal {
namespace {

// Closes a handle unless it was never initialized (a value-initialized
// handle has no loop until its uv_*_init) or is already closing.
template <typename Handle>
void CloseHandle(Handle* handle) {
  uv_handle_t* base = reinterpret_cast<uv_handle_t*>(handle);
  if (base->loop != nullptr && !uv_is_closing(base)) uv_close(base, nullptr);
}

}  // namespace

ServerLoop::ServerLoop(ServerCore& core)
    : core_(core), read_buffer_(std::make_unique<char[]>(kReadBufferBytes)) {}

ServerLoop::~ServerLoop() {
  {
    std::lock_guard lock(wake_mu_);
    wake_open_ = false;
  }
  // The server joined the workers first; responses posted since are dropped
  // by the closed channel.
  if (!loop_initialized_) return;
  if (channel_) channel_->Close();
  // Only after a failed Listen (or a loop that never ran) are handles left.
  uv_walk(
      &loop_,
      [](uv_handle_t* handle, void*) {
        if (!uv_is_closing(handle)) uv_close(handle, nullptr);
      },
      nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);
  connections_.clear();
  uv_loop_close(&loop_);
}

Result<uint16_t> ServerLoop::Listen(uint16_t port, ListenRole role) {
  const HttpServerOptions& options = core_.options();
  std::signal(SIGPIPE, SIG_IGN);
  KILN_ASSIGN_OR_RETURN(sockaddr_storage address, ResolveListenAddress(options.host, port));
  if (int rc = uv_loop_init(&loop_); rc != 0) {
    return ErrnoError(-rc, StrCat("uv_loop_init: ", uv_strerror(rc)));
  }
  loop_initialized_ = true;

  channel_ = std::make_shared<ResponseChannel>(
      CompressionPolicy{.min_bytes = options.min_compress_bytes, .level = options.zstd_level});
  KILN_RETURN_IF_ERROR(channel_->Open(&loop_, [this](Completion c) { Deliver(std::move(c)); }));
  uv_async_init(&loop_, &wake_async_, &ServerLoop::OnWake);
  wake_async_.data = this;
  {
    std::lock_guard lock(wake_mu_);
    wake_open_ = true;
  }
  uv_timer_init(&loop_, &grace_timer_);
  grace_timer_.data = this;

  KILN_ASSIGN_OR_RETURN(uv_os_sock_t socket,
                        BindListenSocket(*reinterpret_cast<const sockaddr*>(&address), role));
  Status listening = listener_.Open(
      &loop_, socket, options.backlog, [this](uv_stream_t* server) { Accept(server); },
      [this](int status) { HandleAcceptError(status); });
  if (!listening) {
    return listening.error().WithContext(StrCat(options.host, ":", port));
  }
  return listener_.port();
}

Status ServerLoop::WatchSignals(std::function<void(bool second)> on_signal) {
  on_signal_ = std::move(on_signal);
  for (auto [handle, signum] : {std::pair{&sigint_, SIGINT}, std::pair{&sigterm_, SIGTERM}}) {
    uv_signal_init(&loop_, handle);
    handle->data = this;
    signals_started_ = true;
    if (int rc = uv_signal_start(handle, &ServerLoop::OnSignal, signum); rc != 0) {
      return ErrnoError(-rc, StrCat("uv_signal_start(", signum, "): ", uv_strerror(rc)));
    }
  }
  return Ok();
}

void ServerLoop::Run() {
  channel_->SetLoopThread();
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void ServerLoop::RequestStop(bool force) {
  if (force) force_stop_.store(true);
  stop_requested_.store(true);
  std::lock_guard lock(wake_mu_);
  if (wake_open_) uv_async_send(&wake_async_);
}

bool ServerLoop::RequestShed() {
  std::lock_guard lock(wake_mu_);
  if (!wake_open_) return false;
  shed_requests_.fetch_add(1);
  uv_async_send(&wake_async_);
  return true;
}

std::string_view ServerLoop::Date() {
  uint64_t second = uv_now(&loop_) / 1000;
  if (date_.empty() || second != date_second_) {
    date_second_ = second;
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char buffer[64];
    size_t length = std::strftime(buffer, sizeof(buffer), "%a, %d %b %Y %H:%M:%S GMT", &utc);
    date_.assign(buffer, length);
  }
  return date_;
}

ServerLoop::Instruments& ServerLoop::InstrumentsFor(std::string_view route, std::string_view method,
                                                    int status) {
  auto key = std::make_tuple(route, method, status);
  auto it = instruments_.find(key);
  if (it != instruments_.end()) return it->second;
  std::string route_label(route.empty() ? "-" : route);
  Instruments instruments{
      .requests = &core_.requests_total().WithLabels(
          {route_label, std::string(method), std::to_string(status)}),
      .latency = &core_.request_seconds().WithLabels({route_label}),
  };
  return instruments_.emplace(key, instruments).first->second;
}

void ServerLoop::RecordRequest(const AccessRecord& record) {
  Instruments& instruments = InstrumentsFor(record.route, record.method, record.status);
  instruments.requests->Increment();
  instruments.latency->Observe(record.seconds);
  if (const AccessLogSink& log = core_.options().access_log) log(FormatAccessLine(record));
}

void ServerLoop::Deliver(Completion completion) {
  auto it = connections_.find(completion.connection_id);
  if (it == connections_.end()) return;  // the client went away meanwhile
  it->second->Deliver(std::move(completion));
}

void ServerLoop::OnConnectionClosed(uint64_t id) {
  if (connections_.erase(id) == 0) return;
  core_.open_connections().Add(-1);
  MaybeFinishShutdown();
}

void ServerLoop::OnWake(uv_async_t* handle) {
  static_cast<ServerLoop*>(handle->data)->HandleWake();
}

void ServerLoop::HandleWake() {
  for (int n = shed_requests_.exchange(0); n > 0; --n) {
    ShedOldestIdle();  // none idle any more: the cap is exceeded until one closes
    core_.ShedRequestDone();
  }
  if (!stop_requested_.load()) return;
  BeginShutdown();
  if (force_stop_.load()) ForceCloseConnections();
}

void ServerLoop::OnSignal(uv_signal_t* handle, int signum) {
  auto* server = static_cast<ServerLoop*>(handle->data);
  // A second signal: no more grace. The callback stops every loop of the
  // server (this one through its wake async, like the others).
  const bool second = server->draining_;
  if (server->on_signal_) {
    server->on_signal_(second);
  } else if (second) {
    server->ForceCloseConnections();
  } else {
    server->BeginShutdown();
  }
}

void ServerLoop::OnGraceExpired(uv_timer_t* timer) {
  static_cast<ServerLoop*>(timer->data)->ForceCloseConnections();
}

void ServerLoop::BeginShutdown() {
  if (draining_) return;
  draining_ = true;
  core_.SetDraining();
  listener_.Close();
  uv_timer_start(&grace_timer_, &ServerLoop::OnGraceExpired,
                 static_cast<uint64_t>(core_.options().shutdown_grace.count()), 0);
  // Closing happens in callbacks, so the map does not change under the loop.
  for (auto& [id, connection] : connections_) connection->BeginDrain();
  MaybeFinishShutdown();
}

void ServerLoop::ForceCloseConnections() {
  for (auto& [id, connection] : connections_) connection->Abort();
}

void ServerLoop::MaybeFinishShutdown() {
  if (!draining_ || finished_ || !connections_.empty()) return;
  finished_ = true;
  {
    std::lock_guard lock(wake_mu_);
    wake_open_ = false;
  }
  CloseHandle(&wake_async_);
  CloseHandle(&grace_timer_);
  if (signals_started_) {
    CloseHandle(&sigint_);
    CloseHandle(&sigterm_);
  }
  channel_->Close();
  // With every handle closed, uv_run returns.
}

}  // namespace kiln::http::internal
