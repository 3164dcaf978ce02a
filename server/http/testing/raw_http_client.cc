#include "server/http/testing/raw_http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace kiln::http::testing {
namespace {

Error Errno(std::string_view what) { return ErrnoError(errno, std::string(what) + ": " + std::strerror(errno)); }

timeval ToTimeval(std::chrono::milliseconds timeout) {
  return timeval{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
                 .tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
}

}  // namespace

Result<RawHttpClient> RawHttpClient::Connect(uint16_t port, std::chrono::milliseconds timeout) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Errno("socket");
  RawHttpClient client(fd);
  timeval tv = ToTimeval(timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return Errno("connect");
  }
  return client;
}

RawHttpClient::RawHttpClient(RawHttpClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

RawHttpClient& RawHttpClient::operator=(RawHttpClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

RawHttpClient::~RawHttpClient() {
  if (fd_ >= 0) ::close(fd_);
}

Status RawHttpClient::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("send");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

void RawHttpClient::ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

void RawHttpClient::Reset() {
  linger abort{.l_onoff = 1, .l_linger = 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  ::close(std::exchange(fd_, -1));
}

Status RawHttpClient::Fill() {
  char chunk[64 << 10];
  while (true) {
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      return Ok();
    }
    if (n == 0) return UnavailableError("connection closed by the server");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return DeadlineExceededError("timed out waiting for the server");
    return Errno("recv");
  }
}

Result<RawResponse> RawHttpClient::ReadResponse(bool head_request) {
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) KILN_RETURN_IF_ERROR(Fill());
  std::string_view head(buffer_.data(), end);
  RawResponse response;
  size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  if (status_line.size() < 12 || !status_line.starts_with("HTTP/1.")) {
    return InvalidArgumentError("bad status line: " + std::string(status_line));
  }
  std::from_chars(status_line.data() + 9, status_line.data() + 12, response.status);
  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 2);
    line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return InvalidArgumentError("bad header line: " + std::string(line));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    response.headers.Add(std::string(line.substr(0, colon)), std::string(value));
  }
  buffer_.erase(0, end + 4);
  size_t length = 0;
  if (auto field = response.headers.Get("Content-Length")) {
    std::from_chars(field->data(), field->data() + field->size(), length);
  }
  if (head_request || response.status < 200) length = 0;
  while (buffer_.size() < length) KILN_RETURN_IF_ERROR(Fill());
  response.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return response;
}

bool RawHttpClient::WaitForClose() {
  while (true) {
    Status status = Fill();
    if (status) continue;
    return status.error().code != ErrorCode::kDeadlineExceeded;
  }
}

Result<RawResponse> RawHttpClient::RoundTrip(std::string_view request, bool head_request) {
  KILN_RETURN_IF_ERROR(Send(request));
  return ReadResponse(head_request);
}

std::string MakeRequest(std::string_view method, std::string_view target, std::string_view body,
                        std::string_view extra_headers) {
  std::string request = std::string(method) + " " + std::string(target) +
                        " HTTP/1.1\r\nHost: test\r\n" + std::string(extra_headers);
  if (!body.empty() || method == "POST" || method == "PUT") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n";
  request += body;
  return request;
}

Result<RawResponse> RoundTripOnce(uint16_t port, std::string_view method, std::string_view target,
                                  std::string_view body, std::string_view extra_headers,
                                  std::chrono::milliseconds timeout) {
  Result<RawHttpClient> client = RawHttpClient::Connect(port, timeout);
  if (!client) return client.error().WithContext("connect to 127.0.0.1:" + std::to_string(port));
  return client->RoundTrip(MakeRequest(method, target, body, extra_headers), method == "HEAD");
}

}  // namespace kiln::http::testing
