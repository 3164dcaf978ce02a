#include "cache/shared/redis_client.h"

#include <charconv>

namespace kiln::cache::shared {
namespace {

uint16_t Crc16(std::string_view bytes) {  // CRC-16/XMODEM, as Redis Cluster uses
  uint16_t crc = 0;
  for (unsigned char byte : bytes) {
    crc ^= static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : crc << 1;
  }
  return crc;
}

// "MOVED 3999 host:port" / "ASK 3999 host:port" -> the node; an empty host
// means the node that answered.
std::optional<RedisNode> RedirectTarget(std::string_view text, std::string_view verb, const RedisNode& from) {
  if (!text.starts_with(verb)) return std::nullopt;
  const size_t space = text.rfind(' ');
  const size_t colon = text.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) return std::nullopt;
  RedisNode node;
  node.host = std::string(text.substr(space + 1, colon - space - 1));
  if (node.host.empty()) node.host = from.host;
  unsigned port = 0;
  std::string_view port_text = text.substr(colon + 1);
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || port == 0 || port > 65535) return std::nullopt;
  node.port = static_cast<uint16_t>(port);
  return node;
}

}  // namespace

uint16_t HashSlot(std::string_view key) {
  if (const size_t open = key.find('{'); open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return Crc16(key) & 16383;
}

namespace {
RedisClientOptions WithTlsOf(const RedisUrl& url, RedisClientOptions options) {
  options.connection.tls = url.tls;
  return options;
}
}  // namespace

RedisClient::RedisClient(RedisUrl url, RedisClientOptions options)
    : url_(std::move(url)), options_(WithTlsOf(url_, std::move(options))) {}

RedisClient::~RedisClient() = default;

Result<RedisClient::Connection> RedisClient::Open(const RedisNode& node) {
  KILN_ASSIGN_OR_RETURN(Connection connection, RedisConnection::Connect(node, options_.connection));
  std::vector<Command> hello;
  if (!url_.password.empty()) {
    hello.push_back(url_.user.empty() ? Command{"AUTH", url_.password} : Command{"AUTH", url_.user, url_.password});
  }
  const std::string db = std::to_string(url_.db);
  if (!url_.cluster && url_.db != 0) hello.push_back({"SELECT", db});
  if (hello.empty()) return connection;
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, connection->Pipeline(hello));
  for (const RedisReply& reply : replies) {
    if (reply.IsError()) {
      // The reply names the failure ("WRONGPASS ...", "ERR DB index is out
      // of range"), never the password sent.
      return FailedPreconditionError("shared tier " + node.ToString() + ": " + reply.text)
          .WithReason("shared_auth_failed");
    }
  }
  return connection;
}

Result<RedisClient::Connection> RedisClient::Take(const RedisNode& node, bool& reused) {
  {
    std::lock_guard lock(mu_);
    auto it = idle_.find(node.ToString());
    if (it != idle_.end() && !it->second.empty()) {
      Connection connection = std::move(it->second.back());
      it->second.pop_back();
      reused = true;
      return connection;
    }
  }
  reused = false;
  return Open(node);
}

void RedisClient::Give(Connection connection) {
  if (connection->broken()) return;
  std::lock_guard lock(mu_);
  std::vector<Connection>& idle = idle_[connection->node().ToString()];
  if (idle.size() < options_.idle_connections_per_node) idle.push_back(std::move(connection));
}

Result<std::vector<RedisReply>> RedisClient::PipelineOn(const RedisNode& node, const std::vector<Command>& commands) {
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    KILN_ASSIGN_OR_RETURN(Connection connection, Take(node, reused));
    Result<std::vector<RedisReply>> replies = connection->Pipeline(commands);
    const bool stale = !replies && reused && connection->broken() && attempt == 0;
    Give(std::move(connection));
    if (!stale) return replies;
    // A pooled connection the server closed (a restart, an idle timeout):
    // once more on a new one.
  }
}

Status RedisClient::RefreshSlots() {
  Error last = UnavailableError("shared tier: no cluster seed answered").WithReason("shared_unavailable");
  std::vector<RedisNode> candidates = url_.nodes;
  {
    std::lock_guard lock(mu_);
    for (const Slots& s : slots_) candidates.push_back(s.node);
  }
  for (const RedisNode& seed : candidates) {
    Result<std::vector<RedisReply>> replies = PipelineOn(seed, {{"CLUSTER", "SLOTS"}});
    if (!replies) {
      last = replies.error();
      continue;
    }
    const RedisReply& reply = replies->front();
    if (reply.kind != RedisReply::Kind::kArray) {
      last = FailedPreconditionError("shared tier " + seed.ToString() + ": CLUSTER SLOTS answered " +
                                     (reply.IsError() ? reply.text : "no slot table") +
                                     " (is it a Redis Cluster? give one URL for a single server)")
                 .WithReason("shared_not_a_cluster");
      continue;
    }
    std::vector<Slots> slots;
    for (const RedisReply& range : reply.elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      Slots s;
      s.first = static_cast<uint16_t>(range.elements[0].integer);
      s.last = static_cast<uint16_t>(range.elements[1].integer);
      s.node.host = range.elements[2].elements[0].text;
      if (s.node.host.empty() || s.node.host == "?") s.node.host = seed.host;
      s.node.port = static_cast<uint16_t>(range.elements[2].elements[1].integer);
      slots.push_back(std::move(s));
    }
    std::lock_guard lock(mu_);
    slots_ = std::move(slots);
    return {};
  }
  return last;
}

Result<std::unique_ptr<RedisConnection>> RedisClient::OpenDedicated() {
  Error last = UnavailableError("shared tier: no node to connect to").WithReason("shared_unavailable");
  for (const RedisNode& node : url_.nodes) {
    Result<Connection> connection = Open(node);
    if (connection) return connection;
    last = connection.error();
  }
  return std::unexpected(last);
}

Result<RedisNode> RedisClient::NodeFor(std::string_view key) {
  if (!url_.cluster) return url_.nodes.front();
  const uint16_t slot = HashSlot(key);
  for (int pass = 0; pass < 2; ++pass) {
    {
      std::lock_guard lock(mu_);
      for (const Slots& s : slots_)
        if (slot >= s.first && slot <= s.last) return s.node;
    }
    if (pass == 0) KILN_RETURN_IF_ERROR(RefreshSlots());
  }
  return UnavailableError("shared tier: no cluster node serves slot " + std::to_string(slot))
      .WithReason("shared_unavailable");
}

Result<std::vector<RedisReply>> RedisClient::Pipeline(std::string_view key, const std::vector<Command>& commands) {
  KILN_ASSIGN_OR_RETURN(RedisNode node, NodeFor(key));
  bool asking = false;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    std::vector<Command> sent;
    for (const Command& command : commands) {
      if (asking) sent.push_back({"ASKING"});
      sent.push_back(command);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, PipelineOn(node, sent));
    if (asking) {  // drop ASKING's +OK replies
      std::vector<RedisReply> kept;
      for (size_t i = 1; i < replies.size(); i += 2) kept.push_back(std::move(replies[i]));
      replies = std::move(kept);
    }
    std::optional<RedisNode> moved, ask;
    for (const RedisReply& reply : replies) {
      if (!reply.IsError()) continue;
      if (!moved) moved = RedirectTarget(reply.text, "MOVED ", node);
      if (!ask) ask = RedirectTarget(reply.text, "ASK ", node);
    }
    if (!url_.cluster || (!moved && !ask)) return replies;
    if (moved) {
      (void)RefreshSlots();  // the map changed; the MOVED target is right either way
      node = *moved;
      asking = false;
    } else {
      node = *ask;
      asking = true;
    }
  }
  return UnavailableError("shared tier: more than " + std::to_string(kMaxRedirects) +
                          " cluster redirects for one command (resharding?)")
      .WithReason("shared_unavailable");
}

Result<RedisReply> RedisClient::Run(std::string_view key, const Command& command) {
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Pipeline(key, {command}));
  return std::move(replies.front());
}

}  // namespace kiln::cache::shared
