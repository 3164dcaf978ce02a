// The address of the shared tier: `kiln serve --shared URL`.
//
//   redis://[user:password@]host:port[/db]      one Redis server
//   rediss://...                                the same over TLS
//   redis://h1:p1,h2:p2,...  (or URL,URL,...)   a Redis Cluster seed list
//
// The password may instead come from the environment (KILN_SHARED_PASSWORD,
// and KILN_SHARED_USER for a Redis 6 ACL user), so it never shows in a
// process listing; one in the URL wins. Redacted() is the only form that
// may be printed or logged. Pure functions on values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::cache::shared {

struct RedisNode {
  std::string host;
  uint16_t port = 6379;
  bool operator==(const RedisNode&) const = default;
  std::string ToString() const;  // "host:port" ("[::1]:port" for IPv6)
};

struct RedisUrl {
  bool tls = false;
  std::vector<RedisNode> nodes;  // one: a single server; more: cluster seeds
  std::string user;              // empty: the default user
  std::string password;          // empty: no AUTH
  int db = 0;                    // SELECT; a cluster has only db 0
  bool cluster = false;          // more than one seed was given

  // "redis://user:***@host:port/db": credentials masked.
  std::string Redacted() const;
};

// Parses `text`; `env_user`/`env_password` fill what the URL leaves out.
// InvalidArgument (reason invalid_shared_url) says what is wrong and where,
// never echoing a password.
Result<RedisUrl> ParseRedisUrl(std::string_view text, std::string_view env_user = {},
                               std::string_view env_password = {});

// ParseRedisUrl with KILN_SHARED_USER and KILN_SHARED_PASSWORD.
Result<RedisUrl> ParseRedisUrlWithEnvironment(std::string_view text);

}  // namespace kiln::cache::shared
