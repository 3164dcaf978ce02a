// StoreWatcher: keeps a server's memory in step with its store when another
// process changes it. Every `interval` a thread of its own takes the store's
// invalidations (CacheStore::TakeInvalidations: entries deleted, quarantined
// or rewritten by `kiln inspect evict`/`verify`, an import, a second server
// or a tuning elsewhere) and hands them to `drop`, which forgets the
// server's copies (hit-path index, loaded programs); the store has already
// dropped its hot-set bytes. So a change made anywhere is served from
// memory for at most about one interval.
//
// Owns its thread: the destructor stops and joins it (at most one poll
// late). `drop` runs on that thread and must be thread-safe. A failed poll
// (a busy or unreadable store) is retried at the next interval.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "cache/cache_store.h"

namespace kiln::service {

class StoreWatcher {
 public:
  using Drop = std::function<void(const cache::CacheStore::Invalidations&)>;

  StoreWatcher(cache::CacheStore& store, std::chrono::milliseconds interval, Drop drop);
  ~StoreWatcher();
  StoreWatcher(const StoreWatcher&) = delete;
  StoreWatcher& operator=(const StoreWatcher&) = delete;

  // Polls once now, on the caller's thread (tests, and a route that must
  // not answer from a copy it can tell is stale).
  void PollNow();

 private:
  void Run();

  cache::CacheStore& store_;
  const std::chrono::milliseconds interval_;
  const Drop drop_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::mutex poll_mu_;     // one poll at a time
  std::thread thread_;     // last: starts once the rest is set
};

}  // namespace kiln::service
