#include "server/service/store_watcher.h"

namespace kiln::service {

StoreWatcher::StoreWatcher(cache::CacheStore& store, std::chrono::milliseconds interval, Drop drop)
    : store_(store), interval_(interval), drop_(std::move(drop)), thread_([this] { Run(); }) {}

StoreWatcher::~StoreWatcher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StoreWatcher::PollNow() {
  std::lock_guard poll(poll_mu_);
  Result<cache::CacheStore::Invalidations> taken = store_.TakeInvalidations();
  if (!taken) return;  // tried again at the next interval
  if (taken->everything || !taken->ids.empty()) drop_(*taken);
}

void StoreWatcher::Run() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    PollNow();
    lock.lock();
  }
}

}  // namespace kiln::service
