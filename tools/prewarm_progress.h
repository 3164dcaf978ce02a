// Live progress of one phase of `kiln prewarm` on standard error: on a
// terminal a bar redrawn in place (done/total, rate, ETA, current file),
// otherwise a plain line every few seconds (logs stay readable). Done() is
// called by the workers (thread-safe); the meter owns a printing thread
// that Finish() (or the destructor) stops and joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::tools {

class ProgressMeter {
 public:
  // `enabled` false: prints nothing (--json, or nothing to do).
  ProgressMeter(std::FILE* out, std::string phase, int64_t total, bool enabled);
  ~ProgressMeter();
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // One item finished; `current` is what a worker takes up or just did.
  void Done(const std::string& current);
  // Prints the final state once and stops the printing thread.
  void Finish();

 private:
  void Run();
  std::string Line(bool final) const;  // caller holds mutex_

  std::FILE* out_;
  std::string phase_;
  int64_t total_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  int64_t done_ = 0;
  std::string current_;
  bool stopping_ = false;
  bool enabled_;
  std::thread printer_;
};

}  // namespace kiln::tools
