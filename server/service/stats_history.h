// StatsHistory: the server's compile and run counters sampled every
// `interval` (10 s by default) for the last `capacity` samples (an hour),
// so that the dashboard and GET /v1/stats/history can show the hit rate and
// the compile seconds saved over time, not only since a page opened. The
// counters are the server-wide ones /v1/stats already shows every tenant.
//
// Owns its thread: the first sample is taken at construction, the
// destructor stops and joins it. `sample` runs on that thread and must be
// thread-safe. Samples() is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::service {

struct StatsSample {
  int64_t unix_ms = 0;
  int64_t hits = 0;  // joined compiles count as hits, as in /v1/stats
  int64_t misses = 0;
  double compile_seconds_saved = 0;
  int64_t executions = 0;
  double device_seconds = 0;
};

class StatsHistory {
 public:
  using Sampler = std::function<StatsSample()>;

  StatsHistory(Sampler sample, std::chrono::milliseconds interval, size_t capacity);
  ~StatsHistory();
  StatsHistory(const StatsHistory&) = delete;
  StatsHistory& operator=(const StatsHistory&) = delete;

  // Oldest first, at most `capacity`.
  std::vector<StatsSample> Samples() const;
  std::chrono::milliseconds interval() const { return interval_; }

 private:
  void Run();
  void Take();

  const Sampler sample_;
  const std::chrono::milliseconds interval_;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;            // guarded by mu_
  std::deque<StatsSample> samples_;  // guarded by mu_
  std::thread thread_;               // last: starts once the rest is set
};

}  // namespace kiln::service
