// LeaseWaiter: compiles waiting on another server's lease, without a thread
// each.
//
// A wait is SharedTier::TryClaim retried on the waiter's one thread when it
// is due: at once when the fleet says the entry was published, its lease
// let go or its compile failed (Nudge, from the fleet's subscription), and
// otherwise after pauses of poll_initial doubling to poll_max (the fallback
// when no subscription is up, or an event is lost), so a thousand waits
// hold no request, compile or shared-tier thread, and a miss that needs no
// wait never queues behind one. A wait ends, calling its `done` exactly once
// on the waiter's thread, with:
//   - the entry, when the holder published it (Claim::entry);
//   - the failure, when the holder's compile failed (Claim::failure);
//   - the lease, when the holder let go without publishing or its lease
//     went stale (Claim::lease; counted as a takeover);
//   - Cancelled, as soon as `cancelled` says so (checked at every look and
//     at least every poll_max: the client went away, the server stops);
//   - DeadlineExceeded (reason shared_wait_timeout) past wait_limit;
//   - Redis's error when a look fails (the caller compiles locally).
// `done` must not block: it hands its work on (a compile thread, a worker).
//
// Thread-safe. The destructor ends every wait still open with Cancelled and
// joins the thread; the SharedTier must outlive the waiter.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/entry.h"
#include "cache/shared/shared_tier.h"

namespace kiln::cache::shared {

class LeaseWaiter {
 public:
  using Done = std::move_only_function<void(Result<SharedTier::Claim>)>;

  explicit LeaseWaiter(SharedTier& tier);
  ~LeaseWaiter();
  LeaseWaiter(const LeaseWaiter&) = delete;
  LeaseWaiter& operator=(const LeaseWaiter&) = delete;

  // Waits for `id` (whose lease another server was just seen to hold).
  void Wait(EntryId id, std::function<bool()> cancelled, Done done);

  // Makes every wait for `id` due now (an event said it changed).
  void Nudge(const EntryId& id);

  // Waits open now, the one being looked at included.
  size_t waiting() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    EntryId id;
    std::function<bool()> cancelled;
    Done done;
    Clock::time_point give_up;
    std::chrono::milliseconds pause;
  };
  void Loop();
  // One look for `wait`: true when it ended (done called).
  bool Look(Pending& wait);

  SharedTier& tier_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::multimap<Clock::time_point, Pending> due_;  // by next look; guarded by mu_
  // Waits not yet ended: due_ and the one Loop is looking at (a look runs
  // outside mu_, so due_.size() alone dips by one during it); guarded by mu_.
  size_t open_ = 0;
  bool stopping_ = false;  // guarded by mu_
  // Nudges for the wait Loop is looking at, so an event during its look is
  // not lost (the look may have read Redis before the publish); guarded by mu_.
  std::optional<EntryId> looking_at_;
  bool nudged_while_looking_ = false;
  std::thread thread_;
};

}  // namespace kiln::cache::shared
