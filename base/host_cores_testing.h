// For tests: every host core held at once, so ParallelFor lends none.
//
// While an AllHostCoresHeld lives, threads of its own hold every core but
// one and the thread that made it holds the last, so ParallelFor on that
// thread runs every part there. Make and destroy it on the same thread.
#pragma once

#include <latch>
#include <optional>
#include <thread>
#include <vector>

#include "base/host_cores.h"

namespace kiln::testing {

class AllHostCoresHeld {
 public:
  AllHostCoresHeld() : held_(HostCores::Get().total() - 1) {
    for (int i = 0; i < HostCores::Get().total() - 1; ++i) {
      holders_.emplace_back([this] {
        HostCores::Lease lease = HostCores::Get().Hold();
        held_.count_down();
        release_.wait();
      });
    }
    held_.wait();
    mine_.emplace(HostCores::Get().Hold());
  }
  ~AllHostCoresHeld() {
    mine_.reset();
    release_.count_down();
    for (std::thread& t : holders_) t.join();
  }
  AllHostCoresHeld(const AllHostCoresHeld&) = delete;
  AllHostCoresHeld& operator=(const AllHostCoresHeld&) = delete;

 private:
  std::latch held_;
  std::latch release_{1};
  std::vector<std::thread> holders_;
  std::optional<HostCores::Lease> mine_;
};

}  // namespace kiln::testing
