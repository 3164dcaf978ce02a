// Concurrent readers and writers, and two stores on one file.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cache/cache_store.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

TEST(CacheStoreConcurrencyTest, ParallelGetsAndPutsStayConsistent) {
  TempDir dir;
  CacheStoreOptions options;
  options.path = dir.File("cache.db");
  options.hot_set_bytes = 64 * 1024;  // small: most reads go to SQLite
  options.hit_flush_interval = 16;
  auto opened = CacheStore::Open(options);
  ASSERT_TRUE(opened);
  CacheStore& store = **opened;
  constexpr int kThreads = 6;
  constexpr uint64_t kKeys = 64;
  std::atomic<int> failures = 0;
  std::atomic<int> hits = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t round = 0; round < 200; ++round) {
        const uint64_t n = (round * 7 + t * 13) % kKeys;
        const std::string executable = TestExecutable(n, 2000 + n * 10);
        if ((round + t) % 3 == 0) {
          if (!store.Put(TestPut(TestId(n), executable))) ++failures;
          continue;
        }
        auto hit = store.Get(TestId(n));
        if (!hit) {
          ++failures;
        } else if (hit->has_value()) {
          ++hits;
          if ((*hit)->entry->executable != executable) ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(hits.load(), 0);
  auto report = store.VerifyAll();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->ok, report->checked);
  auto stats = store.Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->memory_hits + stats->disk_hits, hits.load());
  int64_t recorded_hits = 0;
  auto entries = store.List({});
  ASSERT_TRUE(entries);
  for (const EntryMetadata& entry : *entries) recorded_hits += entry.hit_count;
  EXPECT_EQ(recorded_hits, hits.load());
}

TEST(CacheStoreConcurrencyTest, TwoStoresOnOneFileSeeEachOthersWrites) {
  TempDir dir;
  CacheStoreOptions options;
  options.path = dir.File("cache.db");
  auto first = CacheStore::Open(options);
  auto second = CacheStore::Open(options);
  ASSERT_TRUE(first && second);
  const std::string executable = TestExecutable(9);
  ASSERT_TRUE((*first)->Put(TestPut(TestId(9), executable)));
  auto hit = (*second)->Get(TestId(9));
  ASSERT_TRUE(hit && hit->has_value());
  EXPECT_EQ((*hit)->entry->executable, executable);
}

}  // namespace
}  // namespace kiln::cache
