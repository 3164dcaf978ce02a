#include "server/service/stats_history.h"

namespace kiln::service {

StatsHistory::StatsHistory(Sampler sample, std::chrono::milliseconds interval, size_t capacity)
    : sample_(std::move(sample)), interval_(interval), capacity_(capacity == 0 ? 1 : capacity) {
  Take();
  thread_ = std::thread([this] { Run(); });
}

StatsHistory::~StatsHistory() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::vector<StatsSample> StatsHistory::Samples() const {
  std::lock_guard lock(mu_);
  return {samples_.begin(), samples_.end()};
}

void StatsHistory::Take() {
  StatsSample sample = sample_();
  std::lock_guard lock(mu_);
  samples_.push_back(sample);
  while (samples_.size() > capacity_) samples_.pop_front();
}

void StatsHistory::Run() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    Take();
    lock.lock();
  }
}

}  // namespace kiln::service
