// FleetSubscriber: one server's subscription to the fleet's events
// (fleet_events.h), on a Redis connection of its own.
//
// A thread connects (through `connect`, an authenticated dedicated
// connection), SUBSCRIBEs to kFleetChannel and hands every well-formed
// event to `on_event`; messages that are not events are ignored. When the
// connection drops, or Redis stops answering the PING sent after
// `keepalive` of silence, it reconnects (retry_initial doubling to
// retry_max); each time a subscription starts, `on_subscribed` runs with
// the new subscription's number (1, 2, ...): events sent while none was
// up were missed, and whoever keeps state from them looks again. Both
// handlers run on the subscriber's thread and must not block (hand work
// on). subscribed() says whether a subscription is up now.
//
// Thread-safe. The destructor stops the thread within about `tick`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "cache/shared/fleet_events.h"
#include "cache/shared/redis_connection.h"

namespace kiln::cache::shared {

struct FleetSubscriberOptions {
  std::chrono::milliseconds retry_initial{100};
  std::chrono::milliseconds retry_max{5'000};
  std::chrono::milliseconds keepalive{5'000};
  std::chrono::milliseconds tick{100};  // the longest a read blocks
};

class FleetSubscriber {
 public:
  using Connect = std::function<Result<std::unique_ptr<RedisConnection>>()>;
  struct Handlers {
    std::function<void(const FleetEvent&)> on_event;
    std::function<void(int64_t subscription)> on_subscribed;
  };

  FleetSubscriber(Connect connect, Handlers handlers, FleetSubscriberOptions options = {});
  ~FleetSubscriber();
  FleetSubscriber(const FleetSubscriber&) = delete;
  FleetSubscriber& operator=(const FleetSubscriber&) = delete;

  bool subscribed() const { return subscribed_.load(); }
  int64_t subscriptions() const { return subscriptions_.load(); }  // started so far
  int64_t events() const { return events_.load(); }                // handed on so far

 private:
  void Loop();
  // Reads one subscription until it drops or the subscriber stops.
  void Listen(RedisConnection& connection);
  bool Stopping();
  // Sleeps `pause` unless stopped first; false when stopped.
  bool Pause(std::chrono::milliseconds pause);

  const Connect connect_;
  const Handlers handlers_;
  const FleetSubscriberOptions options_;
  std::atomic<bool> subscribed_{false};
  std::atomic<int64_t> subscriptions_{0};
  std::atomic<int64_t> events_{0};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace kiln::cache::shared
