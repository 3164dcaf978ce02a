#include "server/http/listener.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/str_cat.h"

namespace kiln::http::internal {

Listener::~Listener() {
  if (socket_ >= 0) ::close(socket_);
}

Status Listener::Open(uv_loop_t* loop, uv_os_sock_t socket, int backlog,
                      ConnectionCallback on_connection, ErrorCallback on_error) {
  loop_ = loop;
  socket_ = socket;
  backlog_ = backlog;
  on_connection_ = std::move(on_connection);
  on_error_ = std::move(on_error);
  uv_timer_init(loop_, &resume_timer_);
  resume_timer_.data = this;
  if (int rc = Listen(); rc != 0) return ErrnoError(-rc, StrCat("listen: ", uv_strerror(rc)));
  return Ok();
}

uint16_t Listener::port() const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
}

int Listener::Listen() {
  const int duplicate = ::fcntl(socket_, F_DUPFD_CLOEXEC, 0);
  if (duplicate < 0) return uv_translate_sys_error(errno);
  uv_tcp_init(loop_, &tcp_);
  tcp_.data = this;
  int rc = uv_tcp_open(&tcp_, duplicate);
  if (rc != 0) ::close(duplicate);  // not taken by the handle
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&tcp_), backlog_, &Listener::OnConnection);
  if (rc != 0) {
    tcp_closing_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Listener::OnTcpClosed);
    return rc;
  }
  tcp_open_ = true;
  paused_ = false;
  return 0;
}

void Listener::OnConnection(uv_stream_t* server, int status) {
  auto* listener = static_cast<Listener*>(server->data);
  if (status < 0) {
    listener->on_error_(status);
  } else {
    listener->on_connection_(server);
  }
}

void Listener::Pause(std::chrono::milliseconds delay) {
  if (closed_ || paused_) return;
  paused_ = true;
  if (tcp_open_) {
    // Closing the duplicate ends libuv's accept loop at once.
    tcp_open_ = false;
    tcp_closing_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Listener::OnTcpClosed);
  }
  uv_timer_start(&resume_timer_, &Listener::OnResumeTimer, static_cast<uint64_t>(delay.count()),
                 static_cast<uint64_t>(delay.count()));
}

void Listener::Resume() {
  if (closed_ || !paused_) return;
  if (tcp_closing_) {
    resume_when_closed_ = true;  // the handle is reusable only once closed
    return;
  }
  if (Listen() == 0) uv_timer_stop(&resume_timer_);  // else the timer tries again
}

void Listener::OnResumeTimer(uv_timer_t* timer) { static_cast<Listener*>(timer->data)->Resume(); }

void Listener::OnTcpClosed(uv_handle_t* handle) {
  auto* listener = static_cast<Listener*>(handle->data);
  listener->tcp_closing_ = false;
  if (std::exchange(listener->resume_when_closed_, false)) listener->Resume();
}

void Listener::Close() {
  if (closed_ || loop_ == nullptr) return;
  closed_ = true;
  if (tcp_open_) {
    tcp_open_ = false;
    tcp_closing_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Listener::OnTcpClosed);
  }
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&resume_timer_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&resume_timer_), nullptr);
  }
  ::close(socket_);
  socket_ = -1;
}

}  // namespace kiln::http::internal
