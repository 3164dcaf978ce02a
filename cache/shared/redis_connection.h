// One connection to one Redis node: RESP over TCP, or over TLS for
// rediss://, with a deadline on every exchange.
//
// hiredis (Debian's libhiredis 0.14) formats commands and parses replies;
// the socket is kiln's own, because that hiredis has no TLS and its
// blocking calls take no deadline for a whole exchange. The connection
// only moves bytes: AUTH, SELECT and cluster routing are RedisClient's.
//
// Errors: failing to connect, a TLS handshake or certificate refused, a
// timeout, a closed socket or a malformed reply are Unavailable (reason
// shared_unavailable) naming the node; after one the connection is broken()
// and must be dropped. A Redis error reply ("-ERR ...") is not an error
// here: it comes back as a reply of kind kError. A reply larger than
// max_reply_bytes is refused (ResourceExhausted). Not thread-safe: one user
// at a time (RedisClient pools them).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/shared/redis_url.h"

namespace kiln::cache::shared {

struct RedisReply {
  enum class Kind { kNil, kString, kStatus, kError, kInteger, kArray };
  Kind kind = Kind::kNil;
  std::string text;  // kString, kStatus, kError
  long long integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool IsNil() const { return kind == Kind::kNil; }
  bool IsError() const { return kind == Kind::kError; }
  bool IsStatus(std::string_view status) const { return kind == Kind::kStatus && text == status; }
};

struct ConnectionOptions {
  bool tls = false;
  std::chrono::milliseconds connect_timeout{500};
  std::chrono::milliseconds command_timeout{2000};
  // rediss://: certificates are checked against the system's roots plus
  // this PEM file (KILN_SHARED_TLS_CA), and the node's name.
  std::string tls_ca_file;
  // A client certificate and its key (PEM), for a Redis that asks for one
  // (tls-auth-clients yes): KILN_SHARED_TLS_CERT, KILN_SHARED_TLS_KEY.
  std::string tls_cert_file;
  std::string tls_key_file;
  size_t max_reply_bytes = size_t{1} << 30;
};

// Fills the TLS files from KILN_SHARED_TLS_CA, KILN_SHARED_TLS_CERT and
// KILN_SHARED_TLS_KEY (what `kiln serve` and `kiln inspect` read).
void ApplyTlsEnvironment(ConnectionOptions& options);

class RedisConnection {
 public:
  // Connects (and, for TLS, completes the handshake) within connect_timeout.
  static Result<std::unique_ptr<RedisConnection>> Connect(const RedisNode& node, const ConnectionOptions& options);
  // Takes over an already connected plain socket `fd` (made non-blocking;
  // closed with the connection): a peer kiln did not dial itself, such as
  // the fuzzer's hostile Redis. options.tls is ignored.
  static std::unique_ptr<RedisConnection> FromSocket(int fd, RedisNode node, const ConnectionOptions& options);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  using Command = std::vector<std::string_view>;
  // Sends every command, then reads one reply each (a pipeline), all within
  // command_timeout.
  Result<std::vector<RedisReply>> Pipeline(const std::vector<Command>& commands);
  Result<RedisReply> Run(const Command& command);

  // For a subscription (SUBSCRIBE and the messages after it), which a
  // connection then only reads: Send writes `commands` without reading;
  // Receive answers the next whole value (framed as resp_framing.h checks)
  // once it has arrived, or nullopt when none is there within `wait`
  // (neither breaks the connection). Do not mix with Pipeline.
  Status Send(const std::vector<Command>& commands);
  Result<std::optional<RedisReply>> Receive(std::chrono::milliseconds wait);

  bool broken() const { return broken_; }
  const RedisNode& node() const { return node_; }

 private:
  struct Tls;
  RedisConnection(RedisNode node, ConnectionOptions options, int fd);
  Error Broken(std::string why);
  Status WriteAll(std::string_view bytes, std::chrono::steady_clock::time_point deadline);
  // Some bytes into `buffer`; 0 never (a closed socket is an error).
  Result<size_t> ReadSome(char* buffer, size_t size, std::chrono::steady_clock::time_point deadline);
  Status WaitFor(short events, std::chrono::steady_clock::time_point deadline);

  RedisNode node_;
  ConnectionOptions options_;
  int fd_ = -1;
  std::unique_ptr<Tls> tls_;
  bool broken_ = false;
  std::string received_;  // Receive: bytes read and not yet answered
};

}  // namespace kiln::cache::shared
