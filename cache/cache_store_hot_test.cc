// CacheStore::TryGetHot: memory-only lookups for the server's loop thread.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class CacheStoreHotTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> OpenStore(int hit_flush_interval = 4096) {
    CacheStoreOptions options;
    options.path = dir_.File("cache.db");
    options.hot_set_bytes = 1 << 20;
    options.hit_flush_interval = hit_flush_interval;
    options.clock = [this] { return now_ms_; };
    auto store = CacheStore::Open(std::move(options));
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }

  TempDir dir_;
  int64_t now_ms_ = 1'700'000'000'000;
};

TEST_F(CacheStoreHotTest, ServesOnlyWhatTheHotSetHolds) {
  const std::string executable = TestExecutable(1, 20'000);
  {
    auto store = OpenStore();
    EXPECT_EQ(store->TryGetHot(TestId(1)).entry, nullptr);  // not stored yet
    ASSERT_TRUE(store->Put(TestPut(TestId(1), executable)));
    CacheStore::HotHit hit = store->TryGetHot(TestId(1));
    ASSERT_NE(hit.entry, nullptr);
    EXPECT_EQ(hit.entry->executable, executable);
    EXPECT_EQ(hit.entry->metadata.id, TestId(1));
    EXPECT_EQ(store->TryGetHot(TestId(1, "alice", "v6e")).entry, nullptr);  // other chip
    EXPECT_EQ(store->TryGetHot(TestId(1, "bob")).entry, nullptr);           // other tenant
  }
  // After a reopen the entry is only on disk: a memory miss until Get loads it.
  auto store = OpenStore();
  EXPECT_EQ(store->TryGetHot(TestId(1)).entry, nullptr);
  auto loaded = store->Get(TestId(1));
  ASSERT_TRUE(loaded && loaded->has_value());
  EXPECT_NE(store->TryGetHot(TestId(1)).entry, nullptr);
}

TEST_F(CacheStoreHotTest, ServesOnlyTheExactTenantAndForgetsEvicted) {
  const std::string executable = TestExecutable(2, 8'000);
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(2, "shared"), executable)));
  EXPECT_EQ(store->TryGetHot(TestId(2, "alice")).entry, nullptr) << "no fall-through to the shared namespace";
  CacheStore::HotHit hit = store->TryGetHot(TestId(2, "shared"));
  ASSERT_NE(hit.entry, nullptr);
  EXPECT_EQ(hit.entry->metadata.id.tenant, "shared");
  auto evicted = store->Evict(TestId(2, "shared"));
  ASSERT_TRUE(evicted && *evicted);
  EXPECT_EQ(store->TryGetHot(TestId(2, "shared")).entry, nullptr);
}

TEST_F(CacheStoreHotTest, CountsHitsAndSaysWhenTheyAreDue) {
  auto store = OpenStore(/*hit_flush_interval=*/3);
  ASSERT_TRUE(store->Put(TestPut(TestId(3), TestExecutable(3))));
  EXPECT_FALSE(store->TryGetHot(TestId(3)).hit_stats_due);
  EXPECT_FALSE(store->TryGetHot(TestId(3)).hit_stats_due);
  EXPECT_NE(store->TryGetHot(TestId(3), /*count_hit=*/false).entry, nullptr);  // not counted
  EXPECT_TRUE(store->TryGetHot(TestId(3)).hit_stats_due);  // the third buffered hit
  ASSERT_TRUE(store->FlushHitStats());
  auto metadata = store->GetMetadata(TestId(3));
  ASSERT_TRUE(metadata && metadata->has_value());
  EXPECT_EQ((*metadata)->hit_count, 3);
  auto stats = store->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->memory_hits, 3);
}

}  // namespace
}  // namespace kiln::cache
