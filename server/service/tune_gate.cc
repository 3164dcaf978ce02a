#include "server/service/tune_gate.h"

namespace kiln::service {

void TuneGate::RunSubmitted() {
  std::lock_guard lock(mu_);
  ++runs_;
}

void TuneGate::RunEnded() {
  std::lock_guard lock(mu_);
  if (runs_ > 0 && --runs_ == 0) idle_.notify_all();
}

int64_t TuneGate::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

Status TuneGate::WaitForNoRuns(const std::function<bool()>& stop, std::atomic<bool>* waiting,
                               std::chrono::milliseconds poll) {
  std::unique_lock lock(mu_);
  if (runs_ == 0) return Ok();
  if (waiting != nullptr) waiting->store(true);
  Status status = Ok();
  while (runs_ > 0) {
    if (stop && stop()) {
      status = CancelledError("stopped while waiting for the device pool's runs to finish");
      break;
    }
    idle_.wait_for(lock, poll);
  }
  if (waiting != nullptr) waiting->store(false);
  return status;
}

}  // namespace kiln::service
