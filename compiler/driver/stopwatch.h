// Stopwatch: wall time in milliseconds between laps, for the compile
// stages' timings. Not thread-safe; one per compile.
#pragma once

#include <chrono>

namespace kiln::driver {

class Stopwatch {
 public:
  // Milliseconds since construction or the previous lap.
  double LapMs() {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace kiln::driver
