// Connection: accepting, reading and parsing input, timers and closing.
#include "server/http/connection.h"

#include "server/http/request_framing.h"
#include "server/http/server_loop.h"
#include "base/str_cat.h"

namespace kiln::http::internal {
namespace {

uint64_t NowNs() { return uv_hrtime(); }

uint64_t MillisUntil(uint64_t deadline_ns, uint64_t now_ns) {
  return deadline_ns > now_ns ? (deadline_ns - now_ns + 999'999) / 1'000'000 : 0;
}

uint64_t ToNs(std::chrono::milliseconds duration) {
  return static_cast<uint64_t>(duration.count()) * 1'000'000;
}

std::string PeerName(const uv_tcp_t& tcp) {
  sockaddr_storage address{};
  int length = sizeof(address);
  if (uv_tcp_getpeername(&tcp, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "-";
  char host[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    uv_ip6_name(in6, host, sizeof(host));
    return StrCat("[", host, "]:", ntohs(in6->sin6_port));
  }
  const auto* in4 = reinterpret_cast<const sockaddr_in*>(&address);
  uv_ip4_name(in4, host, sizeof(host));
  return StrCat(host, ":", ntohs(in4->sin_port));
}

}  // namespace

Connection::Connection(ServerLoop& server, uint64_t id) : server_(server), id_(id) {
  llhttp_init(&parser_, HTTP_REQUEST, &ParserSettings());
  parser_.data = this;
}

Status Connection::Accept(uv_stream_t* listener) {
  if (int rc = uv_tcp_init(server_.loop(), &tcp_); rc != 0) {
    return ErrnoError(-rc, StrCat("uv_tcp_init: ", uv_strerror(rc)));
  }
  tcp_.data = this;
  ++open_handles_;
  if (int rc = uv_timer_init(server_.loop(), &timer_); rc != 0) {
    return ErrnoError(-rc, StrCat("uv_timer_init: ", uv_strerror(rc)));
  }
  timer_.data = this;
  ++open_handles_;
  if (int rc = uv_accept(listener, reinterpret_cast<uv_stream_t*>(&tcp_)); rc != 0) {
    return ErrnoError(-rc, StrCat("uv_accept: ", uv_strerror(rc)));
  }
  uv_tcp_nodelay(&tcp_, 1);
  peer_ = PeerName(tcp_);
  UpdateReading();
  UpdateTimer();
  return Ok();
}

void Connection::Close() { CloseWithUnanswered(kClientClosedStatus); }

void Connection::Abort() { CloseWithUnanswered(503); }

void Connection::CloseWithUnanswered(int status) {
  if (closing_) return;
  closing_ = true;
  server_.OnConnectionClosing(idle_place_);
  // Requests that will never be answered still get their access-log line.
  uint64_t now = NowNs();
  for (const Slot& slot : pipeline_) {
    server_.RecordRequest(AccessRecord{.peer = peer_,
                                       .method = slot.method,
                                       .target = slot.target,
                                       .route = slot.route,
                                       .status = status,
                                       .seconds = static_cast<double>(now - slot.start_ns) * 1e-9});
  }
  CancelUnanswered();
  pipeline_.clear();
  if (open_handles_ == 0) {
    server_.OnConnectionClosed(id_);  // destroys this
    return;
  }
  // Both handles were initialized in order; close the ones that were.
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Connection::OnClosed);
  if (open_handles_ == 2) uv_close(reinterpret_cast<uv_handle_t*>(&timer_), &Connection::OnClosed);
}

void Connection::CancelUnanswered() {
  for (Slot& slot : pipeline_) {
    if (!slot.ready && slot.cancel) slot.cancel->Cancel();
  }
}

void Connection::OnClosed(uv_handle_t* handle) {
  auto* connection = static_cast<Connection*>(handle->data);
  if (--connection->open_handles_ == 0) connection->server_.OnConnectionClosed(connection->id_);
}

void Connection::BeginDrain() {
  if (closing_) return;
  no_more_requests_ = true;
  if (!paused_input_.empty() || incoming_.active) linger_on_close_ = true;
  parser_paused_ = false;
  paused_input_.clear();
  if (pipeline_.empty() && writes_in_flight_ == 0) {
    Close();
    return;
  }
  if (!pipeline_.empty()) pipeline_.back().keep_alive = false;  // the last response says close
  UpdateReading();
}

// --- Reading ---

void Connection::OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  *buf = static_cast<Connection*>(handle->data)->server_.ReadBuffer();
}

void Connection::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* connection = static_cast<Connection*>(stream->data);
  if (nread > 0) {
    connection->Consume(buf->base, static_cast<size_t>(nread));
  } else if (nread == UV_EOF) {
    connection->HandleEof();
  } else if (nread < 0) {
    connection->Close();  // reset or another socket error: nobody to answer
  }
}

void Connection::Consume(const char* data, size_t size) {
  if (closing_) return;
  if (lingering_) return;  // discarding what a closed request left behind
  in_read_callback_ = true;
  Parse(data, size);
  in_read_callback_ = false;
  Flush();
  UpdateReading();
  UpdateTimer();
}

void Connection::Parse(const char* data, size_t size) {
  input_begin_ = data;
  input_end_ = data + size;
  llhttp_errno_t err = llhttp_execute(&parser_, data, size);
  input_begin_ = nullptr;
  input_end_ = nullptr;
  if (err == HPE_OK) {
    RememberLastNonBlank(data, data + size);
    return;
  }
  if (err == HPE_PAUSED) {
    // A full pipeline (resume later) or a last request (ignore the rest).
    const char* position = llhttp_get_error_pos(&parser_);
    RememberLastNonBlank(data, position);
    if (!no_more_requests_) {
      paused_input_.assign(position, data + size - position);
      parser_paused_ = true;
    } else if (position != data + size) {
      linger_on_close_ = true;  // the client sent more after its last request
    }
    return;
  }
  if (err == HPE_PAUSED_UPGRADE) {
    no_more_requests_ = true;  // no protocol upgrades: answer, then close
    return;
  }
  if (rejection_) {
    FinishWithError(*rejection_);
    return;
  }
  FinishWithError(MalformedRequestError(err, llhttp_get_error_reason(&parser_)));
}

namespace {
bool IsBlank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

char Connection::LastNonBlankBefore(const char* at) const {
  if (input_begin_ == nullptr) return last_nonblank_;
  while (at > input_begin_ && IsBlank(at[-1])) --at;
  return at > input_begin_ ? at[-1] : last_nonblank_;
}

bool Connection::EndsRequestLine(const char* at) const {
  return input_begin_ != nullptr && at >= input_begin_ && at < input_end_ && (*at == '\r' || *at == '\n');
}

void Connection::RememberLastNonBlank(const char* begin, const char* end) {
  while (end > begin && IsBlank(end[-1])) --end;
  if (end > begin) last_nonblank_ = end[-1];
}

void Connection::HandleEof() {
  eof_ = true;
  // Like nginx, take EOF as the client leaving: work for it may stop (the
  // answers are still written if they come).
  CancelUnanswered();
  if (lingering_ ||
      (pipeline_.empty() && writes_in_flight_ == 0 && !incoming_.active && !parser_paused_)) {
    Close();
    return;
  }
  if (incoming_.active && !no_more_requests_) {
    // The client half-closed mid-request: say so, as it may still read.
    FinishWithError(InvalidArgumentError("the connection was closed before the request was complete")
                        .WithReason("incomplete_request"));
    Flush();
  }
  UpdateReading();
  UpdateTimer();
}

bool Connection::CanAcceptMore() const {
  return pipeline_.size() < server_.options().max_pipelined_requests &&
         uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&tcp_)) <
             server_.options().max_write_queue_bytes;
}

void Connection::UpdateReading() {
  if (closing_) return;
  // Parse what a full pipeline left over, now that there is room.
  while (parser_paused_ && !no_more_requests_ && CanAcceptMore()) {
    parser_paused_ = false;
    std::string input = std::move(paused_input_);
    paused_input_.clear();
    llhttp_resume(&parser_);
    in_read_callback_ = true;
    Parse(input.data(), input.size());
    in_read_callback_ = false;
    Flush();
    if (closing_) return;
  }
  if (eof_ && !parser_paused_ && pipeline_.empty() && writes_in_flight_ == 0) {
    Close();
    return;
  }
  bool want = lingering_ || (!eof_ && !no_more_requests_ && !parser_paused_ && CanAcceptMore());
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  if (want && !reading_) {
    reading_ = uv_read_start(stream, &Connection::OnAlloc, &Connection::OnRead) == 0;
  } else if (!want && reading_) {
    uv_read_stop(stream);
    reading_ = false;
  }
}

// --- Timers ---

bool Connection::IsIdle() const {
  return !closing_ && !lingering_ && !no_more_requests_ && !incoming_.active &&
         !parser_paused_ && pipeline_.empty() && writes_in_flight_ == 0;
}

void Connection::RefreshIdle() { server_.UpdateIdle(*this, idle_place_); }

void Connection::UpdateTimer() {
  RefreshIdle();
  if (closing_ || lingering_) return;
  const HttpServerOptions& options = server_.options();
  uint64_t now = NowNs();
  uint64_t timeout_ms;
  if (incoming_.active) {
    timeout_ms = MillisUntil(incoming_.start_ns + ToNs(options.request_timeout), now);
  } else if (writes_in_flight_ > 0) {
    timeout_ms = MillisUntil(last_write_ns_ + ToNs(options.request_timeout), now);
  } else if (!pipeline_.empty()) {
    uv_timer_stop(&timer_);  // handlers are working; shutdown bounds them
    return;
  } else {
    timeout_ms = static_cast<uint64_t>(options.idle_timeout.count());
  }
  uv_timer_start(&timer_, &Connection::OnTimer, timeout_ms, 0);
}

void Connection::OnTimer(uv_timer_t* timer) {
  static_cast<Connection*>(timer->data)->HandleTimeout();
}

void Connection::HandleTimeout() {
  if (closing_) return;
  if (lingering_) {
    Close();
    return;
  }
  if (incoming_.active && !no_more_requests_) {
    FinishWithError(DeadlineExceededError(StrCat("the request was not received within ",
                                                 server_.options().request_timeout.count(), " ms"))
                        .WithReason("request_timeout"));
    Flush();
    UpdateReading();
    UpdateTimer();
    return;
  }
  // An idle keep-alive connection, or a client that stopped reading.
  if (pipeline_.empty() || writes_in_flight_ > 0) Close();
}

}  // namespace kiln::http::internal
