// libFuzzer harness: a hostile or corrupted Redis answering the shared
// tier (cache/shared): the input is every byte the "server" sends back, over
// a real socket, to a pipeline of the commands a compile's look into Redis
// sends (EXISTS, GET); each string reply then goes through what checks a
// fetched entry (DecodeBundle with the runtime's program verifier).
//
// Contract checked beyond "no crash, no hang": a pipeline of two commands
// either fails or returns exactly two replies.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "cache/bundle.h"
#include "cache/shared/redis_connection.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  if (size > (64 << 10)) return 0;  // stays within one socket buffer
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
  // The server's whole answer is already sent, then it hangs up.
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = write(fds[1], data + sent, size - sent);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fds[1], SHUT_WR);
  cache::shared::ConnectionOptions options;
  options.command_timeout = std::chrono::milliseconds(200);
  options.max_reply_bytes = 1 << 20;
  auto connection = cache::shared::RedisConnection::FromSocket(fds[0], {"fuzz", 6379}, options);
  auto replies = connection->Pipeline({{"EXISTS", "k"}, {"GET", "k"}});
  close(fds[1]);
  if (!replies) return 0;
  if (replies->size() != 2) fuzz::FailCheck("a 2-command pipeline returned", std::to_string(replies->size()));
  for (const cache::shared::RedisReply& reply : *replies) {
    if (reply.kind == cache::shared::RedisReply::Kind::kString) {
      (void)cache::DecodeBundle(reply.text, cache::CurrentSchemaVersion());
    }
  }
  return 0;
}
