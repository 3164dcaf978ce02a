#include "base/host_cores.h"
#include "base/host_cores_testing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace kiln {
namespace {

TEST(HostCoreCountTest, TakesAWholeNumberFromTheEnvironmentElseTheCpus) {
  EXPECT_EQ(HostCoreCount(8, nullptr), 8);
  EXPECT_EQ(HostCoreCount(8, "1"), 1);
  EXPECT_EQ(HostCoreCount(8, "32"), 32);
  for (const char* bad : {"", "0", "-2", "2x", "1.5", "99999", " 2"}) {
    EXPECT_EQ(HostCoreCount(8, bad), 8) << "'" << bad << "'";
  }
  EXPECT_EQ(HostCoreCount(0, nullptr), 1);
}

TEST(HostCoresTest, EveryPartRunsExactlyOnceAndTheCoresComeBack) {
  HostCores& cores = HostCores::Get();
  const int before = cores.in_use();
  for (int64_t parts : {0, 1, 2, 3, 17, 1000}) {
    std::vector<std::atomic<int>> runs(parts);
    cores.ParallelFor(parts, [&](int64_t i) { runs[i].fetch_add(1); });
    for (int64_t i = 0; i < parts; ++i) ASSERT_EQ(runs[i].load(), 1) << "part " << i << " of " << parts;
  }
  // Helpers give their cores back once they run out of parts, just after
  // the call returns.
  for (int i = 0; i < 500 && cores.in_use() != before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(cores.in_use(), before);
}

// Parts that wait for each other can only finish when a helper runs beside
// the caller: so this shows helpers are lent when cores are idle.
TEST(HostCoresTest, IdleCoresRunPartsBesideTheCaller) {
  HostCores& cores = HostCores::Get();
  if (cores.total() < 2) GTEST_SKIP() << "one host core: nothing to lend";
  std::atomic<int> arrived{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
  cores.ParallelFor(2, [&](int64_t) {
    {
      std::lock_guard lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    // Bounded: alone, the caller would run both parts one after the other.
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  });
  EXPECT_EQ(threads.size(), 2u);
}

TEST(HostCoresTest, NoCoreIsLentWhileLeasesHoldThemAll) {
  HostCores& cores = HostCores::Get();
  testing::AllHostCoresHeld held;
  EXPECT_EQ(cores.in_use(), cores.total());
  std::mutex mu;
  std::set<std::thread::id> threads;
  cores.ParallelFor(64, [&](int64_t) {
    std::lock_guard lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(HostCoresTest, ALeaseOnAThreadThatHoldsOneCountsOnce) {
  HostCores& cores = HostCores::Get();
  const int before = cores.in_use();
  {
    HostCores::Lease outer = cores.Hold();
    EXPECT_EQ(cores.in_use(), before + 1);
    {
      HostCores::Lease inner = cores.Hold();
      EXPECT_EQ(cores.in_use(), before + 1);
    }
    EXPECT_EQ(cores.in_use(), before + 1);
  }
  EXPECT_EQ(cores.in_use(), before);
}

TEST(HostCoresTest, NestedAndConcurrentCallsFinish) {
  HostCores& cores = HostCores::Get();
  const int before = cores.in_use();
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      HostCores::Get().ParallelFor(8, [&](int64_t i) {
        HostCores::Get().ParallelFor(8, [&](int64_t j) { sum.fetch_add(i * 8 + j); });
      });
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(sum.load(), 4 * (63 * 64 / 2));
  for (int i = 0; i < 500 && cores.in_use() != before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(cores.in_use(), before);
}

}  // namespace
}  // namespace kiln
