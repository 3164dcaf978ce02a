// Single-flight: concurrent requests for one key share one computation.
//
// The first caller of Join for a key becomes the leader and must arrange for
// Finish(key, value) to be called exactly once (typically from a compile
// thread); callers that Join while the flight is open are joiners. Finish
// closes the flight and then calls every waiter's callback with the value,
// the leader's first, outside the lock, on the thread that called Finish.
// No thread ever blocks waiting: joiners are callbacks, so a request thread
// is free while a compile runs. Errors travel inside Value and are shared
// by every waiter. A waiter may say how to tell that its client has gone
// (`gone`); a flight whose waiters have all gone may be ended early
// (FinishIfAbandoned), atomically with respect to new joiners, so a request
// that joins in between is never answered for the ones that left.
// Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::service {

template <typename Value>
class SingleFlight {
 public:
  enum class Role { kLeader, kJoiner };
  using Callback = std::move_only_function<void(const Value& value, Role role)>;

  // Registers `callback` for `key`; kLeader when this call opened the flight.
  // `gone` (null: never) returns true once this waiter's client has left.
  Role Join(const std::string& key, Callback callback, std::function<bool()> gone = nullptr) {
    std::lock_guard lock(mu_);
    auto [it, opened] = flights_.try_emplace(key);
    it->second.push_back(Waiter{std::move(callback), opened ? Role::kLeader : Role::kJoiner, std::move(gone)});
    return opened ? Role::kLeader : Role::kJoiner;
  }

  // True when the flight for `key` is open and every waiter's client has
  // gone.
  bool Abandoned(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = flights_.find(key);
    return it != flights_.end() && AllGone(it->second);
  }

  // Finishes the flight for `key` with `value` only if it is abandoned;
  // true when it did.
  bool FinishIfAbandoned(const std::string& key, const Value& value) {
    std::vector<Waiter> waiters;
    {
      std::lock_guard lock(mu_);
      auto it = flights_.find(key);
      if (it == flights_.end() || !AllGone(it->second)) return false;
      waiters = std::move(it->second);
      flights_.erase(it);
    }
    for (Waiter& waiter : waiters) waiter.callback(value, waiter.role);
    return true;
  }

  // Closes the flight for `key` and answers its waiters. A key with no open
  // flight is ignored.
  void Finish(const std::string& key, const Value& value) {
    std::vector<Waiter> waiters;
    {
      std::lock_guard lock(mu_);
      auto it = flights_.find(key);
      if (it == flights_.end()) return;
      waiters = std::move(it->second);
      flights_.erase(it);
    }
    for (Waiter& waiter : waiters) waiter.callback(value, waiter.role);
  }

  size_t open_flights() const {
    std::lock_guard lock(mu_);
    return flights_.size();
  }

 private:
  struct Waiter {
    Callback callback;
    Role role;
    std::function<bool()> gone;
  };
  static bool AllGone(const std::vector<Waiter>& waiters) {
    for (const Waiter& waiter : waiters) {
      if (!waiter.gone || !waiter.gone()) return false;
    }
    return true;
  }
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::vector<Waiter>> flights_;  // guarded by mu_
};

}  // namespace kiln::service
