// Running totals: after every kind of write, from this store or another
// connection, they equal a recount of the entries table.
#include "cache/store_totals.h"

#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/migrations.h"
#include "cache/store_rows.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::RandomBytes;
using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class StoreTotalsTest : public ::testing::Test {
 protected:
  std::string Path() const { return dir_.File("cache.db"); }
  std::unique_ptr<CacheStore> OpenStore(uint64_t max_bytes = 0) {
    CacheStoreOptions options;
    options.path = Path();
    options.hot_set_bytes = 0;  // every Get reads (and checks) SQLite
    options.max_bytes = max_bytes;
    auto store = CacheStore::Open(std::move(options));
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }
  std::unique_ptr<Connection> Raw() {
    auto db = Connection::Open(Path(), {});
    EXPECT_TRUE(db) << db.error().message;
    return db ? std::move(*db) : nullptr;
  }
  // The store's running totals equal a full recount of the file.
  void ExpectExact(CacheStore& store) {
    auto running = store.Totals();
    ASSERT_TRUE(running) << running.error().message;
    auto db = Raw();
    auto recount = TotalsReader::Recount(*db);
    ASSERT_TRUE(recount) << recount.error().message;
    EXPECT_EQ((*running)->by_tenant, recount->by_tenant);
    EXPECT_EQ((*running)->all, recount->all);
    EXPECT_EQ((*running)->evicted_total, recount->evicted_total);
    EXPECT_EQ((*running)->quarantined_total, recount->quarantined_total);
  }

  TempDir dir_;
};

TEST_F(StoreTotalsTest, FollowPutsReplacementsQuarantineAndEvictions) {
  auto store = OpenStore();
  const std::string small = TestExecutable(1, 3000), big = RandomBytes(2, 9000);
  ASSERT_TRUE(store->Put(TestPut(TestId(1, "alice", "v5e"), small)));
  ASSERT_TRUE(store->Put(TestPut(TestId(2, "alice", "v6e"), big)));
  ASSERT_TRUE(store->Put(TestPut(TestId(3, "bob", "v5e"), small)));
  ASSERT_TRUE(store->Put(TestPut(TestId(4, "shared", "v5e"), big)));
  ExpectExact(*store);
  auto totals = store->Totals();
  ASSERT_TRUE(totals);
  EXPECT_EQ((*totals)->all.live.entries, 4);
  EXPECT_EQ((*totals)->all.live.raw_bytes, 2 * small.size() + 2 * big.size());
  const NamespaceTotals& alice = (*totals)->Of("alice");
  EXPECT_EQ(alice.live.entries, 2);
  EXPECT_EQ(alice.live_by_chip.size(), 2u);
  EXPECT_EQ(alice.live_by_chip.at("v6e").raw_bytes, big.size());
  EXPECT_EQ((*totals)->Of("nobody").live.entries, 0);

  // Replacing an entry moves its bytes, not its count.
  ASSERT_TRUE(store->Put(TestPut(TestId(1, "alice", "v5e"), big)));
  ExpectExact(*store);
  EXPECT_EQ((*store->Totals())->Of("alice").live.raw_bytes, 2 * big.size());
  EXPECT_EQ((*store->Totals())->Of("alice").live.entries, 2);

  // A bad checksum quarantines on read: the entry moves to `quarantined`.
  ASSERT_TRUE(Raw()->Execute("UPDATE entries SET checksum = checksum + 1 WHERE id = " +
                             std::to_string(EntryRowId(TestId(3, "bob", "v5e")))));
  auto hit = store->Get(TestId(3, "bob", "v5e"));
  ASSERT_TRUE(hit);
  EXPECT_FALSE(hit->has_value());
  ExpectExact(*store);
  EXPECT_EQ((*store->Totals())->Of("bob").live.entries, 0);
  EXPECT_EQ((*store->Totals())->Of("bob").quarantined.entries, 1);
  EXPECT_EQ((*store->Totals())->quarantined_total, 1);

  ASSERT_TRUE(*store->Evict(TestId(4, "shared", "v5e")));
  ExpectExact(*store);
  EXPECT_EQ((*store->Totals())->Of("shared").live.entries, 0);
  EXPECT_EQ((*store->Totals())->evicted_total, 1);
  // Hit statistics do not disturb the totals.
  ASSERT_TRUE(store->Get(TestId(2, "alice", "v6e")));
  ASSERT_TRUE(store->FlushHitStats());
  ExpectExact(*store);
}

TEST_F(StoreTotalsTest, FollowEvictionToTheBudget) {
  auto store = OpenStore(/*max_bytes=*/40'000);
  for (uint64_t n = 0; n < 12; ++n) ASSERT_TRUE(store->Put(TestPut(TestId(n), RandomBytes(n, 9000))));
  auto totals = store->Totals();
  ASSERT_TRUE(totals);
  EXPECT_LE((*totals)->all.live.stored_bytes, 40'000u);
  EXPECT_GT((*totals)->evicted_total, 0);
  ExpectExact(*store);
}

TEST_F(StoreTotalsTest, SeeWritesOfOtherConnections) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  ASSERT_TRUE(store->Put(TestPut(TestId(2), TestExecutable(2))));
  EXPECT_EQ((*store->Totals())->Of("alice").live.entries, 2);
  {
    // Another process (here: another store on the file) evicts one ...
    auto other = OpenStore();
    ASSERT_TRUE(*other->Evict(TestId(1)));
  }
  EXPECT_EQ((*store->Totals())->Of("alice").live.entries, 1);
  EXPECT_EQ((*store->Totals())->evicted_total, 1);
  // ... and a tool writing SQL directly is counted by the triggers too.
  ASSERT_TRUE(Raw()->Execute("DELETE FROM entries"));
  EXPECT_EQ((*store->Totals())->all.live.entries, 0);
  ExpectExact(*store);
}

TEST_F(StoreTotalsTest, MigrationCountsTheEntriesAlreadyStored) {
  {
    auto db = Raw();
    ASSERT_TRUE(Migrate(*db, EmbeddedMigrations(), /*target_version=*/3));
    for (int n = 1; n <= 3; ++n) {
      ASSERT_TRUE(db->Execute(
          "INSERT INTO entries (id, tenant, key, chip, format_version, options, plan_kind, raw_bytes, "
          "stored_bytes, checksum, compile_seconds, device_seconds, created_ms, last_hit_ms, quarantined) "
          "VALUES (" + std::to_string(n) + ", 'alice', '" + TestId(n).key.Hex() + "', 'v5e', 1, '', 'heuristic', " +
          std::to_string(100 * n) + ", " + std::to_string(10 * n) + ", 0, 1, 0, 0, 0, " + (n == 3 ? "1" : "0") + ")"));
    }
  }
  auto store = OpenStore();
  ExpectExact(*store);
  const NamespaceTotals& alice = (*store->Totals())->Of("alice");
  EXPECT_EQ(alice.live, (EntryCount{.entries = 2, .raw_bytes = 300, .stored_bytes = 30}));
  EXPECT_EQ(alice.quarantined, (EntryCount{.entries = 1, .raw_bytes = 300, .stored_bytes = 30}));
}

TEST_F(StoreTotalsTest, ReadAgainOnlyWhenTheFileChanged) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  auto first = store->Totals();
  auto second = store->Totals();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->get(), second->get()) << "unchanged file: the same snapshot";
  ASSERT_TRUE(store->Put(TestPut(TestId(2), TestExecutable(2))));
  auto third = store->Totals();
  ASSERT_TRUE(third);
  EXPECT_NE(first->get(), third->get());
  EXPECT_EQ((*third)->all.live.entries, 2);
}

}  // namespace
}  // namespace kiln::cache
