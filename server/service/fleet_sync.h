// FleetSync: keeps one server's store in step with the fleet's shared tier
// (`kiln serve --shared`), through the fleet's events (fleet_events.h).
//
//   - Every event about an entry nudges the compile service's waits for it
//     (a `joined` answer comes when the holder publishes, not at the next
//     poll).
//   - A `published` event of a version newer than the one this store holds
//     (the tuned plan another server found for an entry this one compiled
//     or fetched) fetches the entry, verifies it and swaps it in
//     (CacheStore::ReplaceWithTuned: readers see the old bytes or the new),
//     then `forget` drops the in-memory copies, so every later answer is
//     the new plan. Entries this store does not hold are left alone.
//   - Catching up: events sent while this server had no subscription (it
//     was down, Redis restarted) are lost, so after each (re)subscription
//     the first hit on each entry (NoteHit) compares its version with the
//     one in Redis, in the background; that hit is answered as stored, the
//     next ones get the newer entry.
// The fetches, checks and swaps run on one worker thread of FleetSync's
// own, never on the subscriber's, a request's or a compile's thread; a key
// is queued once at a time. Failures (Redis down, a value that does not
// verify, a store that cannot write) leave the local entry as it is and
// are counted.
//
// Thread-safe. The destructor stops the subscription, then the worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "base/worker_pool.h"
#include "cache/cache_store.h"
#include "cache/shared/fleet_subscriber.h"
#include "cache/shared/shared_tier.h"
#include "server/service/compile_service.h"

namespace kiln::service {

struct FleetSyncCounters {
  bool subscribed = false;
  int64_t subscriptions = 0;  // started since the server started
  int64_t events = 0;         // received
  int64_t replaced = 0;       // newer entries swapped in
  int64_t checks = 0;         // versions compared after a (re)subscription
  int64_t failed = 0;         // fetches or swaps that failed (the local entry kept)
};

class FleetSync {
 public:
  FleetSync(cache::shared::SharedTier& tier, cache::CacheStore& store, CompileService& compile,
            std::function<void(const cache::EntryId&)> forget,
            cache::shared::FleetSubscriberOptions subscriber_options = {});
  ~FleetSync();
  FleetSync(const FleetSync&) = delete;
  FleetSync& operator=(const FleetSync&) = delete;

  // A hit answered `id` from this store with `local`'s version: compared
  // with Redis's once per subscription. Cheap; never blocks on Redis.
  void NoteHit(const cache::EntryId& id, const cache::shared::EntryVersion& local);

  FleetSyncCounters Counters() const;

 private:
  void OnEvent(const cache::shared::FleetEvent& event);
  void OnSubscribed(int64_t subscription);
  // Queues a look at `id` (once at a time); `announced`: the version an
  // event named, else Redis's is read.
  void Queue(const cache::EntryId& id, std::optional<cache::shared::EntryVersion> announced);
  // On the worker: takes a newer version of `id` when there is one.
  void CatchUp(const cache::EntryId& id, std::optional<cache::shared::EntryVersion> announced);

  cache::shared::SharedTier& tier_;
  cache::CacheStore& store_;
  CompileService& compile_;
  const std::function<void(const cache::EntryId&)> forget_;

  mutable std::mutex mu_;
  std::unordered_set<cache::EntryId, cache::EntryIdHash> checked_;  // this subscription; guarded by mu_
  std::unordered_set<cache::EntryId, cache::EntryIdHash> queued_;   // guarded by mu_
  std::atomic<int64_t> replaced_{0}, checks_{0}, failed_{0};

  std::unique_ptr<WorkerPool> worker_;
  std::unique_ptr<cache::shared::FleetSubscriber> subscriber_;  // last: its handlers use the rest
};

}  // namespace kiln::service
