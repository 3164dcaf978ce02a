#include "tools/http_client.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/str_cat.h"

namespace kiln::tools {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Closes the descriptor on every path out.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

Result<int> Connect(const HttpUrl& url, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found); rc != 0) {
    return UnavailableError(StrCat("cannot resolve ", url.host, ": ", gai_strerror(rc)));
  }
  std::string last_error = "no address";
  int fd = -1;
  for (addrinfo* at = found; at != nullptr && fd < 0; at = at->ai_next) {
    fd = socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC, at->ai_protocol);
    if (fd < 0) continue;
    timeval limit{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
                  .tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    // SO_SNDTIMEO bounds connect() too on Linux.
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    if (connect(fd, at->ai_addr, at->ai_addrlen) != 0) {
      last_error = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return UnavailableError(StrCat("cannot connect to ", url.host, ":", url.port, ": ", last_error));
  return fd;
}

Status SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      return UnavailableError(errno == EAGAIN ? "sending the request timed out"
                                              : StrCat("sending the request failed: ", std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return Ok();
}

Result<std::string> ReceiveAll(int fd) {
  std::string in;
  char buffer[64 << 10];
  while (true) {
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return UnavailableError(errno == EAGAIN ? "waiting for the response timed out"
                                              : StrCat("reading the response failed: ", std::strerror(errno)));
    }
    if (got == 0) return in;
    in.append(buffer, static_cast<size_t>(got));
  }
}

Result<std::string> Dechunk(std::string_view body) {
  std::string out;
  while (true) {
    const size_t line_end = body.find("\r\n");
    if (line_end == std::string_view::npos) return DataLossError("chunked response cut off");
    const size_t size = std::strtoull(std::string(body.substr(0, line_end)).c_str(), nullptr, 16);
    body.remove_prefix(line_end + 2);
    if (size == 0) return out;
    if (body.size() < size + 2) return DataLossError("chunked response cut off");
    out.append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

// Without `has_body` (a HEAD answer) no body is read, whatever the headers say.
Result<HttpResponse> ParseResponse(std::string_view raw, bool has_body) {
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return DataLossError("the server closed the connection before a full response");
  std::string_view head = raw.substr(0, head_end);
  std::string_view body = raw.substr(head_end + 4);
  HttpResponse response;
  const size_t status_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, status_end);
  if (status_line.substr(0, 5) != "HTTP/" || status_line.size() < 12) {
    return DataLossError("not an HTTP response: " + std::string(status_line.substr(0, 40)));
  }
  response.status = std::atoi(std::string(status_line.substr(9, 3)).c_str());
  head.remove_prefix(status_end == std::string_view::npos ? head.size() : status_end + 2);
  while (!head.empty()) {
    size_t end = head.find("\r\n");
    std::string_view line = head.substr(0, end);
    head.remove_prefix(end == std::string_view::npos ? head.size() : end + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    response.headers.emplace_back(Lower(line.substr(0, colon)), std::string(value));
  }
  if (!has_body) return response;
  if (Lower(response.Header("transfer-encoding")).find("chunked") != std::string::npos) {
    KILN_ASSIGN_OR_RETURN(response.body, Dechunk(body));
  } else if (const std::string length = response.Header("content-length"); !length.empty()) {
    const size_t size = std::strtoull(length.c_str(), nullptr, 10);
    if (body.size() < size) return DataLossError("the response body was cut off");
    response.body = std::string(body.substr(0, size));
  } else {
    response.body = std::string(body);
  }
  return response;
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, 8) == "https://") return InvalidArgumentError("--server " + std::string(url) + ": https is not supported (plain http only)");
  if (url.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgumentError("--server " + std::string(url) + ": expected http://HOST[:PORT][/PATH]");
  }
  url.remove_prefix(kScheme.size());
  HttpUrl out;
  const size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) out.base_path = std::string(url.substr(slash));
  while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8470
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgumentError("--server: unclosed '[' in the address");
    out.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() == ':') out.port = std::string(authority.substr(1));
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) out.port = std::string(authority.substr(colon + 1));
  }
  if (out.host.empty()) return InvalidArgumentError("--server " + std::string(kScheme) + std::string(url) + ": no host");
  if (out.port.empty() || out.port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError("--server: the port '" + out.port + "' is not a number");
  }
  return out;
}

Result<HttpResponse> HttpRoundTrip(const HttpUrl& url, std::string_view method, std::string_view target,
                                   const std::vector<std::string>& headers, std::string_view body,
                                   std::chrono::milliseconds timeout) {
  KILN_ASSIGN_OR_RETURN(int fd, Connect(url, timeout));
  Socket socket(fd);
  std::string request = StrCat(method, " ", url.base_path, target, " HTTP/1.1\r\nHost: ", url.host, ":", url.port,
                               "\r\nConnection: close\r\nUser-Agent: kiln-prewarm\r\n");
  for (const std::string& header : headers) request += header + "\r\n";
  if (!body.empty() || method == "POST") request += StrCat("Content-Length: ", body.size(), "\r\n");
  request += "\r\n";
  KILN_RETURN_IF_ERROR(SendAll(fd, request));
  KILN_RETURN_IF_ERROR(SendAll(fd, body));
  KILN_ASSIGN_OR_RETURN(std::string raw, ReceiveAll(fd));
  return ParseResponse(raw, method != "HEAD");
}

}  // namespace kiln::tools
