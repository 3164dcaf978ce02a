#include "cache/shared/lease_waiter.h"

#include <algorithm>

namespace kiln::cache::shared {

LeaseWaiter::LeaseWaiter(SharedTier& tier) : tier_(tier) {
  thread_ = std::thread([this] { Loop(); });
}

LeaseWaiter::~LeaseWaiter() {
  std::multimap<Clock::time_point, Pending> open;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  open.swap(due_);
  for (auto& [when, wait] : open) wait.done(CancelledError("the server stopped waiting for another server's compile"));
}

void LeaseWaiter::Wait(EntryId id, std::function<bool()> cancelled, Done done) {
  const SharedTierOptions& options = tier_.options();
  tier_.CountLeaseWait();
  Pending wait{.id = std::move(id),
               .cancelled = std::move(cancelled),
               .done = std::move(done),
               .give_up = Clock::now() + options.wait_limit,
               .pause = std::max(options.poll_initial, std::chrono::milliseconds(1))};
  std::unique_lock lock(mu_);
  if (stopping_) {
    lock.unlock();
    wait.done(CancelledError("the server stopped waiting for another server's compile"));
    return;
  }
  const Clock::time_point first = Clock::now() + wait.pause;
  const bool earliest = due_.empty() || first < due_.begin()->first;
  due_.emplace(first, std::move(wait));
  ++open_;
  if (earliest) wake_.notify_one();
}

void LeaseWaiter::Nudge(const EntryId& id) {
  std::lock_guard lock(mu_);
  if (looking_at_ && *looking_at_ == id) nudged_while_looking_ = true;
  const Clock::time_point now = Clock::now();
  bool moved = false;
  for (auto it = due_.begin(); it != due_.end();) {
    if (it->first > now && it->second.id == id) {
      Pending wait = std::move(it->second);
      it = due_.erase(it);
      due_.emplace(now, std::move(wait));
      moved = true;
    } else {
      ++it;
    }
  }
  if (moved) wake_.notify_one();
}

size_t LeaseWaiter::waiting() const {
  std::lock_guard lock(mu_);
  return open_;
}

bool LeaseWaiter::Look(Pending& wait) {
  if (wait.cancelled && wait.cancelled()) {
    wait.done(CancelledError("stopped waiting for another server's compile of " + wait.id.ToString() +
                             ": nobody waits for it now"));
    return true;
  }
  Result<SharedTier::Claim> claim = tier_.TryClaim(wait.id);
  if (!claim) {
    wait.done(std::move(claim));
    return true;
  }
  if (!claim->held) {
    if (claim->lease) tier_.CountTakeover();
    claim->waited = true;
    wait.done(std::move(claim));
    return true;
  }
  if (Clock::now() + wait.pause > wait.give_up) {
    wait.done(DeadlineExceededError("another server has compiled " + wait.id.ToString() + " for longer than " +
                                    std::to_string(tier_.options().wait_limit.count()) + " ms")
                  .WithReason("shared_wait_timeout"));
    return true;
  }
  return false;
}

void LeaseWaiter::Loop() {
  const std::chrono::milliseconds poll_max = std::max(tier_.options().poll_max, std::chrono::milliseconds(1));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (due_.empty()) {
      wake_.wait(lock, [this] { return stopping_ || !due_.empty(); });
      continue;
    }
    if (const Clock::time_point next = due_.begin()->first; Clock::now() < next) {
      // A copy: a Nudge during the wait moves (frees) the node holding it.
      wake_.wait_until(lock, next);
      continue;
    }
    Pending wait = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    looking_at_ = wait.id;
    nudged_while_looking_ = false;
    lock.unlock();
    const bool ended = Look(wait);
    lock.lock();
    looking_at_.reset();
    if (ended) --open_;
    if (!ended) {
      wait.pause = std::min(wait.pause * 2, poll_max);
      // A nudge during the look: look again at once.
      due_.emplace(nudged_while_looking_ ? Clock::now() : Clock::now() + wait.pause, std::move(wait));
    }
  }
}

}  // namespace kiln::cache::shared
