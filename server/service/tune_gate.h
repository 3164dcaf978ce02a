// TuneGate: background tuning gives way to the device pool's runs.
//
// The execute route calls RunSubmitted before it hands a run to the pool
// and RunEnded once the run is answered or refused; the tuning runner
// (tune_runner.h, through SimulatedRunner::set_before_kernel) calls
// WaitForNoRuns before it times or evaluates each kernel. So tuning does
// no measuring while any run is queued or running: a run that arrives while
// tuning is working shares the machine with at most the one kernel being
// timed or evaluated then, never with a whole trial. (The tuner's own
// compiles of candidates between measurements are host work and are not
// gated; they use no chip.)
//
// Thread-safe. WaitForNoRuns polls `stop` while it waits, so a cancelled
// job or a shutdown does not wait for the pool to go idle.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "base/status.h"

namespace kiln::service {

class TuneGate {
 public:
  void RunSubmitted();
  void RunEnded();
  int64_t runs() const;
  // Returns at once when no run is queued or running; else blocks until
  // none is (Ok) or `stop` says true (kCancelled), checking it every `poll`.
  // `waiting`, when given, is true while it blocks (for progress reports).
  Status WaitForNoRuns(const std::function<bool()>& stop, std::atomic<bool>* waiting = nullptr,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10));

 private:
  mutable std::mutex mu_;
  std::condition_variable idle_;
  int64_t runs_ = 0;  // guarded by mu_
};

}  // namespace kiln::service
