// The redis_reply harness's replay of one input, shared by the harness and
// the unit test that replays its kept findings (cache/shared/
// redis_connection_test.cc), so a kept input is checked in every ctest run
// exactly as the fuzzer checked it.
//
// The input is every byte a hostile or broken Redis sends back, over a real
// socket, then it hangs up. It is read twice: as the answer to the pipeline
// a compile's look into Redis sends (EXISTS, GET), each string reply then
// going through what checks a fetched entry (DecodeBundle); and as the
// messages of a subscription (Receive, as the fleet's pub/sub reads them).
//
// The contract beyond "no crash, no hang": a 2-command pipeline either fails
// or returns exactly two replies, and it only returns them when the bytes
// start with two values framed as resp_framing.h says (every bulk payload
// followed by its CRLF: hiredis 0.14 alone reads "$3\r\nabcde\r\n" as "abc");
// every message a subscription answers is one framed value, taken in order.
// ReplayRedisReply says which part broke, or nullopt. Header-only; each call
// opens and closes its own sockets; thread-compatible.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/bundle.h"
#include "cache/shared/redis_connection.h"
#include "cache/shared/resp_framing.h"

namespace kiln::fuzz {

// A connection to a "server" that has sent `bytes` and hung up (its end
// is half-closed, and closed with this, so the commands sent still go
// somewhere); no connection when no socket pair could be made. The bytes
// must fit one socket buffer.
class HungUpRedis {
 public:
  explicit HungUpRedis(std::string_view bytes) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
    peer_ = fds[1];
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = write(peer_, bytes.data() + sent, bytes.size() - sent);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    shutdown(peer_, SHUT_WR);
    cache::shared::ConnectionOptions options;
    options.command_timeout = std::chrono::milliseconds(200);
    options.max_reply_bytes = 1 << 20;
    connection_ = cache::shared::RedisConnection::FromSocket(fds[0], {"fuzz", 6379}, options);
  }
  ~HungUpRedis() {
    connection_.reset();
    if (peer_ >= 0) close(peer_);
  }
  HungUpRedis(const HungUpRedis&) = delete;
  HungUpRedis& operator=(const HungUpRedis&) = delete;

  cache::shared::RedisConnection* connection() const { return connection_.get(); }

 private:
  int peer_ = -1;
  std::unique_ptr<cache::shared::RedisConnection> connection_;
};

// The length of the framed value `bytes` starts with, or nullopt when it
// does not start with a whole framed value.
inline std::optional<size_t> FramedValueLength(std::string_view bytes) {
  Result<std::optional<size_t>> length = cache::shared::RespValueLength(bytes);
  if (!length || !*length) return std::nullopt;
  return **length;
}

inline std::optional<std::string> ReplayRedisReply(std::string_view input) {
  using cache::shared::RedisReply;
  // The look into Redis: EXISTS + GET in one pipeline.
  if (HungUpRedis redis(input); redis.connection() != nullptr) {
    auto replies = redis.connection()->Pipeline({{"EXISTS", "k"}, {"GET", "k"}});
    if (replies) {
      if (replies->size() != 2) return "a 2-command pipeline returned " + std::to_string(replies->size()) + " replies";
      const std::optional<size_t> first = FramedValueLength(input);
      const std::optional<size_t> second = first ? FramedValueLength(input.substr(*first)) : std::nullopt;
      if (!second) return std::string("a pipeline believed replies that are not two framed values");
      for (const RedisReply& reply : *replies) {
        if (reply.kind == RedisReply::Kind::kString) (void)cache::DecodeBundle(reply.text, cache::CurrentSchemaVersion());
      }
    }
  }
  // A subscription's messages: each one framed value, in order.
  if (HungUpRedis redis(input); redis.connection() != nullptr) {
    size_t at = 0;
    for (int message = 0; message < 64; ++message) {
      auto received = redis.connection()->Receive(std::chrono::milliseconds(0));
      if (!received || !*received) break;
      const std::optional<size_t> length = FramedValueLength(input.substr(at));
      if (!length) return "message " + std::to_string(message) + " was answered from bytes that are not a framed value";
      at += *length;
    }
  }
  return std::nullopt;
}

}  // namespace kiln::fuzz
