// Helpers for the device pool's tests: a completion recorder, jobs that
// sleep, and a gate that holds a chip until released. Header-only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/pool/device_pool.h"

namespace kiln::runtime::pool {

// Records completions in order; lets tests wait for a number of them.
class Completions {
 public:
  std::function<void(Status, const JobStats&)> Callback(std::string label) {
    return [this, label](Status status, const JobStats& stats) {
      std::lock_guard<std::mutex> lock(mu_);
      order_.push_back(label);
      errors_.push_back(status ? "" : status.error().ToString());
      codes_.push_back(status ? std::nullopt : std::optional<ErrorCode>(status.error().code));
      stats_.push_back(stats);
      cv_.notify_all();
    };
  }
  void WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return order_.size() >= n; });
  }
  std::vector<std::string> order() {
    std::lock_guard<std::mutex> lock(mu_);
    return order_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  std::vector<JobStats> stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  // The code of each failed completion; nullopt for a success.
  std::vector<std::optional<ErrorCode>> codes() {
    std::lock_guard<std::mutex> lock(mu_);
    return codes_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> order_;
  std::vector<std::string> errors_;
  std::vector<std::optional<ErrorCode>> codes_;
  std::vector<JobStats> stats_;
};

// A job that takes `ms` of host time and reports `device_seconds`.
inline Job Sleeper(std::string client, int ms, double device_seconds,
            std::function<void(Status, const JobStats&)> done) {
  Job job;
  job.client = std::move(client);
  job.run = [ms, device_seconds](const ChipContext&) -> Result<double> {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return device_seconds;
  };
  job.done = std::move(done);
  return job;
}

// Blocks the pool's only chip until released, so a queue can build up.
struct Gate {
  std::promise<void> release;
  std::shared_future<void> opened = release.get_future().share();
  Job Hold(Completions& c) {
    Job job;
    job.client = "gate";
    job.run = [f = opened](const ChipContext&) -> Result<double> {
      f.wait();
      return 0.0;
    };
    job.done = c.Callback("gate");
    return job;
  }
};

}  // namespace kiln::runtime::pool
