#include "cache/shared/fleet_subscriber.h"

#include <algorithm>

namespace kiln::cache::shared {
namespace {

using Clock = std::chrono::steady_clock;

bool IsPushOf(const RedisReply& reply, std::string_view kind) {
  return reply.kind == RedisReply::Kind::kArray && !reply.elements.empty() &&
         reply.elements[0].kind == RedisReply::Kind::kString && reply.elements[0].text == kind;
}

}  // namespace

FleetSubscriber::FleetSubscriber(Connect connect, Handlers handlers, FleetSubscriberOptions options)
    : connect_(std::move(connect)), handlers_(std::move(handlers)), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

FleetSubscriber::~FleetSubscriber() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

bool FleetSubscriber::Stopping() {
  std::lock_guard lock(mu_);
  return stopping_;
}

bool FleetSubscriber::Pause(std::chrono::milliseconds pause) {
  std::unique_lock lock(mu_);
  return !stop_cv_.wait_for(lock, pause, [this] { return stopping_; });
}

void FleetSubscriber::Loop() {
  std::chrono::milliseconds retry = options_.retry_initial;
  while (!Stopping()) {
    Result<std::unique_ptr<RedisConnection>> connection = connect_();
    if (connection) {
      const int64_t before = subscriptions_.load();
      Listen(**connection);
      subscribed_ = false;
      // A subscription that came up resets the backoff.
      if (subscriptions_.load() != before) retry = options_.retry_initial;
    }
    if (!Pause(retry)) return;
    retry = std::min(retry * 2, options_.retry_max);
  }
}

void FleetSubscriber::Listen(RedisConnection& connection) {
  const std::string channel(kFleetChannel);
  if (!connection.Send({{"SUBSCRIBE", channel}})) return;
  // The confirmation comes first: ["subscribe", channel, 1].
  const Clock::time_point confirm_by = Clock::now() + std::max(options_.keepalive, std::chrono::milliseconds(1000));
  for (;;) {
    if (Stopping() || Clock::now() > confirm_by) return;
    Result<std::optional<RedisReply>> reply = connection.Receive(options_.tick);
    if (!reply) return;
    if (*reply && IsPushOf(**reply, "subscribe")) break;
    if (*reply && (*reply)->IsError()) return;
  }
  subscribed_ = true;
  const int64_t subscription = ++subscriptions_;
  if (handlers_.on_subscribed) handlers_.on_subscribed(subscription);

  Clock::time_point heard = Clock::now();
  bool ping_out = false;
  while (!Stopping()) {
    Result<std::optional<RedisReply>> reply = connection.Receive(options_.tick);
    if (!reply) return;
    const Clock::time_point now = Clock::now();
    if (!*reply) {
      if (now - heard < options_.keepalive) continue;
      if (ping_out) return;  // a keepalive went unanswered: Redis is gone
      if (!connection.Send({{"PING"}})) return;
      ping_out = true;
      heard = now;  // the PING gets its own keepalive to answer
      continue;
    }
    heard = now;
    ping_out = false;
    const RedisReply& push = **reply;
    if (IsPushOf(push, "message") && push.elements.size() == 3 &&
        push.elements[2].kind == RedisReply::Kind::kString) {
      std::optional<FleetEvent> event = DecodeFleetEvent(push.elements[2].text);
      if (event && handlers_.on_event) {
        events_++;
        handlers_.on_event(*event);
      }
    }
  }
}

}  // namespace kiln::cache::shared
