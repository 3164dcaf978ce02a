// `kiln tune`'s live progress on standard error while it searches: trials,
// the best time so far against the heuristic's, and the budget spent. On a
// terminal one line redrawn in place, otherwise a plain line every few
// seconds. Reads an autotune::Progress (filled by autotune::ProgressRunner
// on the tuning thread); owns a printing thread that Finish() (or the
// destructor) stops and joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "compiler/autotune/progress_runner.h"

namespace kiln::tools {

class TuneProgressLine {
 public:
  // `enabled` false (--json): prints nothing.
  TuneProgressLine(std::FILE* out, const autotune::Progress& progress, int64_t max_trials, double max_seconds,
                   bool enabled);
  ~TuneProgressLine();
  TuneProgressLine(const TuneProgressLine&) = delete;
  TuneProgressLine& operator=(const TuneProgressLine&) = delete;

  // Stops the printing thread; clears the line on a terminal, prints the
  // last figures otherwise.
  void Finish();

  // The line for the figures now (for tests too).
  std::string Line() const;

 private:
  void Run();

  std::FILE* out_;
  const autotune::Progress& progress_;
  const int64_t max_trials_;
  const double max_seconds_;
  const bool terminal_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread printer_;
};

}  // namespace kiln::tools
