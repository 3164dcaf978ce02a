// A thread-safe Redis client over one server or a Redis Cluster.
//
// Holds a small pool of RedisConnections per node; a new connection is
// authenticated (AUTH [user] password) and, on a single server, SELECTs the
// URL's database before use. On a cluster (more than one seed) each command
// goes to the node serving its key's hash slot (CRC16 of the key, or of its
// {hash tag}); the slot map is read with CLUSTER SLOTS from any seed, and
// a MOVED reply refreshes it and retries on the named node, an ASK reply
// retries there once after ASKING (at most kMaxRedirects hops).
//
// Errors: transport failures are Unavailable (reason shared_unavailable,
// redis_connection.h); a command that went out on a pooled connection
// found dead (the server restarted) is retried once on a new one. Redis
// error replies come back as replies of kind kError, except AUTH/SELECT
// failures and redirect loops, which are FailedPrecondition and
// Unavailable errors. Messages never carry the password. Thread-safe:
// concurrent calls use separate connections.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/shared/redis_connection.h"
#include "cache/shared/redis_url.h"

namespace kiln::cache::shared {

// The cluster hash slot of `key` (0..16383).
uint16_t HashSlot(std::string_view key);

struct RedisClientOptions {
  ConnectionOptions connection;  // its `tls` is taken from the URL
  size_t idle_connections_per_node = 4;
};

class RedisClient {
 public:
  using Command = RedisConnection::Command;
  static constexpr int kMaxRedirects = 5;

  RedisClient(RedisUrl url, RedisClientOptions options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Runs `command`, routed by `key` on a cluster (ignored otherwise).
  Result<RedisReply> Run(std::string_view key, const Command& command);
  // Runs `commands` as one pipeline on the node of `key`; on a cluster every
  // command must name keys of the same slot as `key`.
  Result<std::vector<RedisReply>> Pipeline(std::string_view key, const std::vector<Command>& commands);

  // A connection of its own (never pooled), authenticated, to the first
  // seed that answers: for a subscription, which holds its connection. On a
  // cluster any node hears every PUBLISH.
  Result<std::unique_ptr<RedisConnection>> OpenDedicated();

  const RedisUrl& url() const { return url_; }

 private:
  struct Slots {
    uint16_t first = 0;
    uint16_t last = 0;
    RedisNode node;
  };
  using Connection = std::unique_ptr<RedisConnection>;

  // A connection to `node`: pooled (reused = true) or new and authenticated.
  Result<Connection> Take(const RedisNode& node, bool& reused);
  void Give(Connection connection);
  Result<Connection> Open(const RedisNode& node);
  // The node serving `key` now (the first seed on a single server).
  Result<RedisNode> NodeFor(std::string_view key);
  Status RefreshSlots();
  // One try on `node`, with the retry on a stale pooled connection.
  Result<std::vector<RedisReply>> PipelineOn(const RedisNode& node, const std::vector<Command>& commands);

  const RedisUrl url_;
  const RedisClientOptions options_;
  std::mutex mu_;
  std::map<std::string, std::vector<Connection>> idle_;  // by node; guarded by mu_
  std::vector<Slots> slots_;                              // guarded by mu_; empty: not read yet
};

}  // namespace kiln::cache::shared
