#include "cache/shared/redis_url.h"

#include <charconv>
#include <cstdlib>

namespace kiln::cache::shared {
namespace {

Error BadUrl(std::string why) {
  return InvalidArgumentError("--shared: " + why +
                              " (expected redis://[user:password@]host:port[/db], rediss://..., or a "
                              "comma-separated cluster seed list)")
      .WithReason("invalid_shared_url");
}

// "%41" -> "A" in user and password (they may hold ':' or '@').
Result<std::string> PercentDecoded(std::string_view text, std::string_view what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= text.size()) return BadUrl("a bad %-escape in the " + std::string(what));
    auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
    if (ec != std::errc() || end != text.data() + i + 3) return BadUrl("a bad %-escape in the " + std::string(what));
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

Result<RedisNode> ParseNode(std::string_view text) {
  RedisNode node;
  std::string_view port_text;
  if (text.starts_with('[')) {  // [IPv6]:port
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return BadUrl("unclosed '[' in host '" + std::string(text) + "'");
    node.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return BadUrl("expected ':port' after ']' in '" + std::string(text) + "'");
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = text.rfind(':');
    node.host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port_text = text.substr(colon + 1);
  }
  if (node.host.empty()) return BadUrl("no host in '" + std::string(text) + "'");
  if (node.host.find_first_of("/?#@ ") != std::string::npos) return BadUrl("bad host '" + node.host + "'");
  if (!port_text.empty() || text.ends_with(':')) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
      return BadUrl("port '" + std::string(port_text) + "' is not a number from 1 to 65535");
    node.port = static_cast<uint16_t>(port);
  }
  return node;
}

}  // namespace

std::string RedisNode::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string RedisUrl::Redacted() const {
  std::string text = tls ? "rediss://" : "redis://";
  if (!user.empty() || !password.empty()) text += (user.empty() ? "" : user) + (password.empty() ? "" : ":***") + "@";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) text += ',';
    text += nodes[i].ToString();
  }
  if (db != 0) {
    text += '/';
    text += std::to_string(db);
  }
  return text;
}

Result<RedisUrl> ParseRedisUrl(std::string_view text, std::string_view env_user, std::string_view env_password) {
  RedisUrl url;
  // A seed list may repeat the scheme on every element: "redis://a:1,redis://b:2".
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    bool tls = url.tls;
    if (part.starts_with("redis://")) {
      tls = false;
      part.remove_prefix(8);
    } else if (part.starts_with("rediss://")) {
      tls = true;
      part.remove_prefix(9);
    } else if (i == 0) {
      const size_t scheme = part.find("://");
      return BadUrl(scheme == std::string_view::npos ? "no scheme"
                                                     : "unknown scheme '" + std::string(part.substr(0, scheme)) + "'");
    }
    if (i > 0 && tls != url.tls) return BadUrl("seed " + std::to_string(i + 1) + " mixes redis:// and rediss://");
    url.tls = tls;
    // Credentials given on any seed apply to all of them.
    if (const size_t at = part.rfind('@'); at != std::string_view::npos) {
      std::string_view credentials = part.substr(0, at);
      part.remove_prefix(at + 1);
      const size_t colon = credentials.find(':');
      KILN_ASSIGN_OR_RETURN(std::string user, PercentDecoded(credentials.substr(0, colon), "user"));
      std::string password;
      if (colon != std::string_view::npos) {
        KILN_ASSIGN_OR_RETURN(password, PercentDecoded(credentials.substr(colon + 1), "password"));
      }
      url.user = std::move(user);
      url.password = std::move(password);
    }
    if (const size_t slash = part.find('/'); slash != std::string_view::npos) {
      std::string_view db_text = part.substr(slash + 1);
      part = part.substr(0, slash);
      if (!db_text.empty()) {
        int db = 0;
        auto [end, ec] = std::from_chars(db_text.data(), db_text.data() + db_text.size(), db);
        if (ec != std::errc() || end != db_text.data() + db_text.size() || db < 0)
          return BadUrl("database '" + std::string(db_text) + "' is not a non-negative number");
        url.db = db;
      }
    }
    if (part.empty()) return BadUrl(parts.size() > 1 ? "seed " + std::to_string(i + 1) + " is empty" : "no host");
    KILN_ASSIGN_OR_RETURN(RedisNode node, ParseNode(part));
    url.nodes.push_back(std::move(node));
  }
  url.cluster = url.nodes.size() > 1;
  if (url.cluster && url.db != 0) return BadUrl("a Redis Cluster has only database 0");
  if (url.user.empty()) url.user = std::string(env_user);
  if (url.password.empty()) url.password = std::string(env_password);
  if (!url.user.empty() && url.password.empty()) return BadUrl("user '" + url.user + "' has no password");
  return url;
}

Result<RedisUrl> ParseRedisUrlWithEnvironment(std::string_view text) {
  const char* user = std::getenv("KILN_SHARED_USER");
  const char* password = std::getenv("KILN_SHARED_PASSWORD");
  return ParseRedisUrl(text, user ? user : "", password ? password : "");
}

}  // namespace kiln::cache::shared
