// The wall clock kiln stamps its records with: milliseconds since the Unix
// epoch. A UnixClock is injectable (tests give the store and the services
// one fake clock); UnixNowMs reads the system clock. MsSince measures an
// elapsed time on the monotonic clock, for timings. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace kiln {

using UnixClock = std::function<int64_t()>;

inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln
