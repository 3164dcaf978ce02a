// A std::chrono clock over the calling thread's CPU time, for the
// single-threaded benchmarks: on a shared machine, wall time would also
// count other processes' turns. Header-only; bench/ only.
#pragma once

#include <chrono>
#include <cstdint>

#include <time.h>

namespace kiln::bench {

struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock, duration>;
  static constexpr bool is_steady = true;
  static time_point now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec));
  }
};

}  // namespace kiln::bench
