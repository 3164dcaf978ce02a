// CacheStore::TakeInvalidations: one process sees what another deleted,
// quarantined or rewrote, and stops serving its copy from memory.
#include <gtest/gtest.h>

#include <algorithm>

#include "cache/cache_store.h"
#include "cache/sqlite_connection.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class InvalidationsTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> OpenStore() {
    CacheStoreOptions options;
    options.path = dir_.File("cache.db");
    options.hot_set_bytes = 1 << 20;
    auto store = CacheStore::Open(std::move(options));
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }
  // `server` holds `id` in memory, as after a hit.
  static void Warm(CacheStore& server, const EntryId& id) {
    auto hit = server.Get(id);
    ASSERT_TRUE(hit && hit->has_value());
    ASSERT_NE(server.TryGetHot(id).entry, nullptr);
  }
  static bool Names(const CacheStore::Invalidations& taken, const EntryId& id) {
    return std::find(taken.ids.begin(), taken.ids.end(), id) != taken.ids.end();
  }

  TempDir dir_;
};

TEST_F(InvalidationsTest, AnotherProcessesEvictionLeavesNoCopyInMemory) {
  auto server = OpenStore();
  auto tool = OpenStore();  // `kiln inspect evict` on the same file
  ASSERT_TRUE(server->Put(TestPut(TestId(1), TestExecutable(1, 9'000))));
  ASSERT_TRUE(server->Put(TestPut(TestId(2), TestExecutable(2, 9'000))));
  Warm(*server, TestId(1));
  Warm(*server, TestId(2));
  auto nothing = server->TakeInvalidations();
  ASSERT_TRUE(nothing) << nothing.error().message;
  EXPECT_TRUE(nothing->ids.empty());  // puts of new entries invalidate nothing

  auto evicted = tool->Evict(TestId(1));
  ASSERT_TRUE(evicted && *evicted);
  EXPECT_NE(server->TryGetHot(TestId(1)).entry, nullptr) << "stale until the server looks";
  auto taken = server->TakeInvalidations();
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_FALSE(taken->everything);
  ASSERT_EQ(taken->ids.size(), 1u);
  EXPECT_EQ(taken->ids[0], TestId(1));
  EXPECT_EQ(server->TryGetHot(TestId(1)).entry, nullptr);
  EXPECT_NE(server->TryGetHot(TestId(2)).entry, nullptr) << "only the evicted entry is dropped";
  auto miss = server->Get(TestId(1));
  ASSERT_TRUE(miss);
  EXPECT_FALSE(miss->has_value());
  auto again = server->TakeInvalidations();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->ids.empty()) << "each change is taken once";
}

TEST_F(InvalidationsTest, RewritesAndQuarantinesAreSeenButHitStatisticsAreNot) {
  auto server = OpenStore();
  auto tool = OpenStore();
  ASSERT_TRUE(server->Put(TestPut(TestId(3), TestExecutable(3, 9'000))));
  ASSERT_TRUE(server->Put(TestPut(TestId(4), TestExecutable(4, 9'000))));
  Warm(*server, TestId(3));
  Warm(*server, TestId(4));
  ASSERT_TRUE(server->TakeInvalidations());

  // Hits (statistics) written by another process change nothing served.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tool->Get(TestId(4)));
  {
    auto raw = Connection::Open(dir_.File("cache.db"), {});
    ASSERT_TRUE(raw);
    ASSERT_TRUE((*raw)->Execute("UPDATE entries SET hit_count = hit_count + 5, last_hit_ms = 7"));
  }
  auto stats_only = server->TakeInvalidations();
  ASSERT_TRUE(stats_only);
  EXPECT_TRUE(stats_only->ids.empty());

  // Other bytes under the same key (a tuned swap by another process).
  auto metadata = tool->GetMetadata(TestId(3));
  ASSERT_TRUE(metadata && metadata->has_value());
  const std::string tuned_bytes = TestExecutable(30, 9'000);  // the request borrows it
  PutRequest tuned = TestPut(TestId(3), tuned_bytes);
  tuned.plan_kind = PlanKind::kTuned;
  tuned.device_seconds = 0.0001;
  ASSERT_TRUE(tool->ReplaceWithTuned(tuned, (*metadata)->checksum));
  // A quarantine by another process's verify.
  {
    auto raw = Connection::Open(dir_.File("cache.db"), {});
    ASSERT_TRUE(raw);
    ASSERT_TRUE((*raw)->Execute("UPDATE entries SET quarantined = 1 WHERE key = '" + TestId(4).key.Hex() + "'"));
  }
  auto taken = server->TakeInvalidations();
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_TRUE(Names(*taken, TestId(3)));
  EXPECT_TRUE(Names(*taken, TestId(4)));
  auto swapped = server->Get(TestId(3));
  ASSERT_TRUE(swapped && swapped->has_value());
  EXPECT_EQ((*swapped)->entry->executable, tuned_bytes) << "the new bytes, not the held ones";
  EXPECT_EQ((*swapped)->entry->metadata.plan_kind, PlanKind::kTuned);
  auto quarantined = server->Get(TestId(4));
  ASSERT_TRUE(quarantined);
  EXPECT_FALSE(quarantined->has_value());
}

TEST_F(InvalidationsTest, AReaderTooFarBehindDropsEverything) {
  auto server = OpenStore();
  ASSERT_TRUE(server->Put(TestPut(TestId(5), TestExecutable(5, 9'000))));
  Warm(*server, TestId(5));
  {
    // As if the log's bound had cut rows this process never took.
    auto raw = Connection::Open(dir_.File("cache.db"), {});
    ASSERT_TRUE(raw);
    ASSERT_TRUE((*raw)->Execute("INSERT INTO invalidations (seq, tenant, key, chip, format_version) "
                                "VALUES (100, 't', '" + TestId(9).key.Hex() + "', 'v5e', 1)"));
  }
  auto taken = server->TakeInvalidations();
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_TRUE(taken->everything);
  EXPECT_EQ(server->TryGetHot(TestId(5)).entry, nullptr);
  auto next = server->TakeInvalidations();
  ASSERT_TRUE(next);
  EXPECT_FALSE(next->everything);
  EXPECT_TRUE(next->ids.empty());
}

}  // namespace
}  // namespace kiln::cache
