// ParallelFor: runs body(i) for every i in [0, count) on up to `jobs`
// threads (the calling thread is one of them), each taking the next index
// as it finishes one, so slow items do not hold up the rest. Returns when
// all are done. `body` must be thread-safe and must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kiln::tools {

template <typename Body>
void ParallelFor(size_t count, int jobs, const Body& body) {
  std::atomic<size_t> next = 0;
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) body(i);
  };
  const size_t threads = std::min(count, static_cast<size_t>(std::max(jobs, 1)));
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace kiln::tools
