// Eviction to the byte budget, pins, explicit eviction and space reclaim.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/storage_problem.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::RandomBytes;
using testing::TempDir;
using testing::TestId;
using testing::TestPut;

constexpr size_t kEntryBytes = 10'000;

class CacheStoreEvictionTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> OpenStore(uint64_t max_bytes) {
    CacheStoreOptions options;
    options.path = dir_.File("cache.db");
    options.max_bytes = max_bytes;
    options.clock = [this] { return now_ms_; };
    auto store = CacheStore::Open(std::move(options));
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }
  bool Present(CacheStore& store, const EntryId& id) {
    auto metadata = store.GetMetadata(id);
    return metadata && metadata->has_value();
  }

  TempDir dir_;
  int64_t now_ms_ = 1'700'000'000'000;
};

TEST_F(CacheStoreEvictionTest, StaysWithinBudgetKeepingCostlyEntries) {
  auto store = OpenStore(/*max_bytes=*/10 * kEntryBytes);
  // Even ids took ten minutes to compile, odd ids a tenth of a second.
  for (uint64_t i = 0; i < 20; ++i) {
    now_ms_ += 1000;
    ASSERT_TRUE(store->Put(TestPut(TestId(i), RandomBytes(i, kEntryBytes), i % 2 == 0 ? 600 : 0.1)));
    auto stats = store->Stats();
    ASSERT_TRUE(stats);
    EXPECT_LE(stats->stored_bytes, 10 * kEntryBytes + 1000) << "after put " << i;
  }
  int costly_kept = 0;
  int cheap_kept = 0;
  for (uint64_t i = 0; i < 20; ++i) {
    if (Present(*store, TestId(i))) ++(i % 2 == 0 ? costly_kept : cheap_kept);
  }
  EXPECT_GE(costly_kept, 8);
  EXPECT_LE(cheap_kept, 1);
  auto stats = store->Stats();
  EXPECT_GT(stats->evicted_total, 0);
  // Evicted entries are not served from memory either.
  for (uint64_t i = 0; i < 20; ++i) {
    if (!Present(*store, TestId(i))) {
      EXPECT_FALSE(store->Get(TestId(i))->has_value()) << i;
    }
  }
}

TEST_F(CacheStoreEvictionTest, RecentlyUsedCheapEntryCanStillGoBeforeCostlyIdleOne) {
  auto store = OpenStore(/*max_bytes=*/2 * kEntryBytes + kEntryBytes / 2);
  ASSERT_TRUE(store->Put(TestPut(TestId(1), RandomBytes(1, kEntryBytes), 900)));  // idle, costly
  now_ms_ += 3600'000;
  ASSERT_TRUE(store->Put(TestPut(TestId(2), RandomBytes(2, kEntryBytes), 0.05)));  // fresh, cheap
  now_ms_ += 1000;
  ASSERT_TRUE(store->Put(TestPut(TestId(3), RandomBytes(3, kEntryBytes), 0.05)));
  EXPECT_TRUE(Present(*store, TestId(1)));  // LRU would have evicted this one
  EXPECT_FALSE(Present(*store, TestId(2)));
}

TEST_F(CacheStoreEvictionTest, PinnedEntriesAreNotEvicted) {
  auto store = OpenStore(/*max_bytes=*/3 * kEntryBytes);
  ASSERT_TRUE(store->Put(TestPut(TestId(0), RandomBytes(0, kEntryBytes), 0.01)));  // lowest score
  auto hit = store->Get(TestId(0));
  ASSERT_TRUE(hit && hit->has_value());
  ASSERT_TRUE((*hit)->pin.pinned());
  for (uint64_t i = 1; i < 10; ++i) ASSERT_TRUE(store->Put(TestPut(TestId(i), RandomBytes(i, kEntryBytes), 100)));
  EXPECT_TRUE(Present(*store, TestId(0)));
  auto evict = store->Evict(TestId(0));
  ASSERT_FALSE(evict);
  EXPECT_NE(evict.error().message.find("in use"), std::string::npos) << evict.error().message;
  EXPECT_EQ(evict.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(evict.error().reason(), kEntryInUse);
  EXPECT_EQ(evict.error().details().retry_after_seconds, 1);

  (*hit)->pin.Release();
  ASSERT_TRUE(store->Put(TestPut(TestId(10), RandomBytes(10, kEntryBytes), 100)));
  EXPECT_FALSE(Present(*store, TestId(0)));
}

TEST_F(CacheStoreEvictionTest, PinOutlivesTheStore) {
  std::optional<CacheHit> hit;
  {
    auto store = OpenStore(0);
    ASSERT_TRUE(store->Put(TestPut(TestId(1), RandomBytes(1, 100))));
    hit = std::move(*store->Get(TestId(1)));
  }
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry->executable, RandomBytes(1, 100));
  hit->pin.Release();
  EXPECT_FALSE(hit->pin.pinned());
}

TEST_F(CacheStoreEvictionTest, EvictByKeyAndFileGivesSpaceBack) {
  auto store = OpenStore(0);
  for (uint64_t i = 0; i < 50; ++i) {
    const std::string executable = RandomBytes(i, 40'000);
    PutRequest put = TestPut(TestId(i), executable);
    put.request_hash = Hash128{i, i};
    ASSERT_TRUE(store->Put(put));
  }
  auto full = store->Stats();
  ASSERT_TRUE(full);
  EXPECT_GE(full->file_bytes, 50u * 40'000);
  for (uint64_t i = 0; i < 50; ++i) {
    auto evicted = store->Evict(TestId(i));
    ASSERT_TRUE(evicted) << evicted.error().message;
    EXPECT_TRUE(*evicted);
  }
  EXPECT_FALSE(*store->Evict(TestId(0)));  // already gone
  auto empty = store->Stats();
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->entries, 0);
  EXPECT_EQ(empty->free_bytes, 0u);
  EXPECT_LT(empty->file_bytes, full->file_bytes / 10);
  EXPECT_EQ(empty->evicted_total, 50);
}

TEST_F(CacheStoreEvictionTest, BudgetEvictionDropsStaleRequestMappings) {
  auto store = OpenStore(/*max_bytes=*/2 * kEntryBytes);
  for (uint64_t i = 0; i < 6; ++i) {
    const std::string executable = RandomBytes(i, kEntryBytes);
    PutRequest put = TestPut(TestId(i), executable, 1);
    put.request_hash = Hash128{100, i};
    now_ms_ += 1000;
    ASSERT_TRUE(store->Put(put));
  }
  for (uint64_t i = 0; i < 6; ++i) {
    auto mapped = store->LookupRequest("alice", Hash128{100, i}, "v5e", kCompilerFormatVersion);
    ASSERT_TRUE(mapped);
    EXPECT_EQ(mapped->has_value(), Present(*store, TestId(i))) << i;
  }
}

}  // namespace
}  // namespace kiln::cache
