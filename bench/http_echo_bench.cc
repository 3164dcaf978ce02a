// kiln_http_echo_bench: the HTTP hot path, a static body from memory.
//
//   kiln_http_echo_bench [seconds] [connections] [body_bytes]
//       Runs a keep-alive GET load against kiln's server (an inline handler
//       answering shared immutable bytes, the shape of a hot-set hit) and
//       against a baseline in the same process: a thread-per-connection
//       blocking server that does no parsing and writev's the same prebuilt
//       response. Prints requests/s, p50/p99 latency and the ratio.
//   kiln_http_echo_bench serve [port] [body_bytes]
//       Serves GET /hit until SIGINT/SIGTERM, for wrk or another outside
//       load generator (e.g. to compare with nginx serving the same file).
//
// Timing figures only; never fails on speed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/http/http_server.h"

namespace {

using Clock = std::chrono::steady_clock;
using kiln::http::Bytes;

constexpr std::string_view kRequest = "GET /hit HTTP/1.1\r\nHost: bench\r\n\r\n";

struct LoadResult {
  uint64_t requests = 0;
  double seconds = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  uint64_t errors = 0;
};

int ConnectLoopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads one response framed by Content-Length; false on error or close.
bool ReadResponse(int fd, std::string& buffer) {
  size_t head_end;
  size_t length = 0;
  char chunk[64 << 10];
  while (true) {
    head_end = buffer.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t at = buffer.find("Content-Length: ");
      if (at == std::string::npos || at > head_end) return false;
      std::from_chars(buffer.data() + at + 16, buffer.data() + head_end, length);
      if (buffer.size() >= head_end + 4 + length) break;
    }
    ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  buffer.erase(0, head_end + 4 + length);
  return true;
}

LoadResult RunLoad(uint16_t port, int connections, double seconds) {
  std::vector<std::vector<double>> latencies(connections);
  std::atomic<uint64_t> errors{0};
  Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(seconds));
  Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      int fd = ConnectLoopback(port);
      if (fd < 0) {
        errors.fetch_add(1);
        return;
      }
      std::string buffer;
      while (Clock::now() < deadline) {
        Clock::time_point sent = Clock::now();
        if (::send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL) !=
                static_cast<ssize_t>(kRequest.size()) ||
            !ReadResponse(fd, buffer)) {
          errors.fetch_add(1);
          break;
        }
        latencies[c].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
      }
      ::close(fd);
    });
  }
  for (std::thread& thread : threads) thread.join();
  LoadResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& per_connection : latencies)
    all.insert(all.end(), per_connection.begin(), per_connection.end());
  std::sort(all.begin(), all.end());
  result.requests = all.size();
  result.errors = errors.load();
  if (!all.empty()) {
    result.p50_ms = all[all.size() / 2];
    result.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return result;
}

// The baseline: accept, then per connection read until a blank line and
// writev the prebuilt response. No parser, no routing, no loop.
class BaselineServer {
 public:
  explicit BaselineServer(Bytes body) : body_(std::move(body)) {
    head_ = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
            std::to_string(body_->size()) + "\r\n\r\n";
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::listen(listen_fd_, 512);
    socklen_t length = sizeof(address);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~BaselineServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    for (std::thread& thread : connections_) thread.join();
  }
  uint16_t port() const { return port_; }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      connections_.emplace_back([this, fd] { Serve(fd); });
    }
  }
  void Serve(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::string pending;
    char chunk[4096];
    while (true) {
      size_t end;
      while ((end = pending.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) {
          ::close(fd);
          return;
        }
        pending.append(chunk, static_cast<size_t>(n));
      }
      pending.erase(0, end + 4);
      iovec parts[2] = {{head_.data(), head_.size()},
                        {const_cast<char*>(body_->data()), body_->size()}};
      size_t total = head_.size() + body_->size();
      size_t sent = 0;
      while (sent < total) {
        ssize_t n = ::writev(fd, parts, 2);
        if (n <= 0) {
          ::close(fd);
          return;
        }
        sent += static_cast<size_t>(n);
        for (iovec& part : parts) {
          size_t used = std::min(part.iov_len, static_cast<size_t>(n));
          part.iov_base = static_cast<char*>(part.iov_base) + used;
          part.iov_len -= used;
          n -= static_cast<ssize_t>(used);
        }
      }
    }
  }

  Bytes body_;
  std::string head_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> connections_;  // accept thread only
};

kiln::http::Router HitRouter(Bytes body) {
  kiln::http::Router router;
  (void)router.Add("GET", "/hit", kiln::http::SyncHandler([body](const kiln::http::Request&) {
                     kiln::http::Response response =
                         kiln::http::Response::WithBytes(200, body, "application/octet-stream");
                     response.compressible = false;
                     return response;
                   }),
                   kiln::http::Execution::kInline);
  return router;
}

Bytes MakeBody(size_t size) {
  std::string body(size, '\0');
  for (size_t i = 0; i < size; ++i) body[i] = static_cast<char>(i * 2654435761u >> 24);
  return kiln::http::MakeBytes(std::move(body));
}

void Print(const char* name, const LoadResult& result) {
  std::printf("%-9s %9.0f req/s  p50 %6.3f ms  p99 %6.3f ms  (%llu requests, %llu errors)\n", name,
              result.requests / result.seconds, result.p50_ms, result.p99_ms,
              static_cast<unsigned long long>(result.requests),
              static_cast<unsigned long long>(result.errors));
}

constexpr const char* kUsage =
    "usage: kiln_http_echo_bench [seconds] [connections] [body_bytes]\n"
    "       kiln_http_echo_bench serve [port] [body_bytes]\n";

// argv[index] as a whole positive number in [1, max], `fallback` when absent;
// exits with the usage on anything else.
size_t ArgOr(int argc, char** argv, int index, size_t fallback, size_t max) {
  if (argc <= index) return fallback;
  const std::string_view text = argv[index];
  size_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0 || value > max) {
    std::fprintf(stderr, "kiln_http_echo_bench: argument %d is '%s', not a number in 1..%zu\n%s", index,
                 argv[index], max, kUsage);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc > 1 && std::string_view(argv[1]) == "serve") {
    kiln::http::HttpServerOptions options;
    options.port = static_cast<uint16_t>(ArgOr(argc, argv, 2, 8080, 65535));
    options.access_log = nullptr;
    kiln::http::HttpServer server(options, HitRouter(MakeBody(ArgOr(argc, argv, 3, 256 << 10, size_t{1} << 30))));
    std::printf("serving GET /hit on 127.0.0.1:%u\n", options.port);
    std::fflush(stdout);
    kiln::Status status = server.Run();
    if (!status) {
      std::fprintf(stderr, "kiln_http_echo_bench: %s\n", status.error().ToString().c_str());
      return 1;
    }
    return 0;
  }
  double seconds = static_cast<double>(ArgOr(argc, argv, 1, 2, 3600));
  int connections = static_cast<int>(ArgOr(argc, argv, 2, 8, 4096));
  size_t body_bytes = ArgOr(argc, argv, 3, 256 << 10, size_t{1} << 30);
  Bytes body = MakeBody(body_bytes);
  std::printf("GET /hit, %zu-byte body, %d keep-alive connections, %.0f s each\n", body_bytes,
              connections, seconds);

  LoadResult baseline;
  {
    BaselineServer server(body);
    baseline = RunLoad(server.port(), connections, seconds);
  }
  LoadResult kiln;
  {
    kiln::http::HttpServerOptions options;
    options.port = 0;
    options.access_log = nullptr;
    kiln::http::HttpServer server(options, HitRouter(body));
    if (kiln::Status started = server.Start(); !started) {
      std::fprintf(stderr, "kiln_http_echo_bench: %s\n", started.error().ToString().c_str());
      return 1;
    }
    kiln = RunLoad(server.port(), connections, seconds);
  }
  Print("baseline", baseline);
  Print("kiln", kiln);
  std::printf("kiln / baseline requests/s: %.2f\n",
              (kiln.requests / kiln.seconds) / (baseline.requests / baseline.seconds));
  return 0;
}
