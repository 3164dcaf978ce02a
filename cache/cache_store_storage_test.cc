// A full disk (simulated by the quota VFS), a read-only store and a write
// lock held elsewhere: writes fail naming the problem, reads keep working,
// deletes use the reserve.
#include <gtest/gtest.h>

#include <filesystem>

#include "cache/cache_store.h"
#include "cache/migrations.h"
#include "cache/testing/quota_vfs.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::DirectoryBytes;
using testing::QuotaVfsUri;
using testing::RandomBytes;
using testing::SetQuotaBytes;
using testing::TempDir;
using testing::TestId;
using testing::TestPut;

constexpr uint64_t kReserve = 256 << 10;

class CacheStoreStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::RegisterQuotaVfs();
    SetQuotaBytes(0);
  }
  void TearDown() override { SetQuotaBytes(0); }

  std::string File() const { return dir_.File("cache.db"); }
  Result<std::unique_ptr<CacheStore>> Open(const std::string& path, uint64_t reserve = kReserve) {
    CacheStoreOptions options;
    options.path = path;
    options.hot_set_bytes = 0;  // reads go to SQLite
    options.reserve_bytes = reserve;
    return CacheStore::Open(std::move(options));
  }
  std::unique_ptr<CacheStore> OpenQuota(uint64_t reserve = kReserve) {
    auto store = Open(QuotaVfsUri(File()), reserve);
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }
  // Empties the write-ahead log (so any write must grow a file), then
  // makes the disk exactly full.
  void FillDisk() {
    {
      auto db = Connection::Open(File(), {});
      ASSERT_TRUE(db) << db.error().message;
      ASSERT_TRUE((*db)->Execute("PRAGMA wal_checkpoint(TRUNCATE)"));
    }
    std::error_code absent;  // closing the last connection removes the log
    const uintmax_t wal_bytes = std::filesystem::file_size(File() + "-wal", absent);
    ASSERT_TRUE(absent || wal_bytes == 0);
    SetQuotaBytes(DirectoryBytes(dir_.path()));
  }

  TempDir dir_;
  const std::string a_ = RandomBytes(1, 20'000), b_ = RandomBytes(2, 20'000), c_ = RandomBytes(3, 20'000);
};

TEST_F(CacheStoreStorageTest, PutOnAFullDiskFailsAsFullAndTheStoreKeepsServing) {
  auto store = OpenQuota();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), a_)));
  EXPECT_TRUE(store->Health().reserve_held);
  FillDisk();

  auto put = store->Put(TestPut(TestId(2), b_));
  ASSERT_FALSE(put);
  EXPECT_EQ(StorageProblemOf(put.error()), StorageProblem::kFull);
  EXPECT_EQ(put.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(put.error().message.find("is full"), std::string::npos) << put.error().message;
  EXPECT_EQ(store->Health().problem, StorageProblem::kFull);
  // Nothing of it stored; everything else still served and listed.
  auto missing = store->Get(TestId(2));
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_FALSE(missing->has_value());
  auto hit = store->Get(TestId(1));
  ASSERT_TRUE(hit && hit->has_value()) << (hit ? "miss" : hit.error().message);
  EXPECT_EQ((*hit)->entry->executable, a_);
  auto listed = store->List({});
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_EQ(listed->size(), 1u);
  EXPECT_EQ((*store->Totals())->all.live.entries, 1);

  // Room again (an operator freed space): puts store again by themselves.
  SetQuotaBytes(0);
  ASSERT_TRUE(store->Put(TestPut(TestId(2), b_)));
  EXPECT_EQ(store->Health().problem, StorageProblem::kNone);
}

TEST_F(CacheStoreStorageTest, DeleteOnAFullDiskSucceedsThroughTheReserve) {
  {
    // Without a reserve a delete on a full disk has no room for its log.
    auto bare = OpenQuota(/*reserve=*/0);
    ASSERT_TRUE(bare->Put(TestPut(TestId(1), a_)));
    FillDisk();
    auto evicted = bare->Evict(TestId(1));
    ASSERT_FALSE(evicted);
    EXPECT_EQ(StorageProblemOf(evicted.error()), StorageProblem::kFull);
    SetQuotaBytes(0);
  }
  auto store = OpenQuota();
  ASSERT_TRUE(store->Put(TestPut(TestId(2), b_)));
  ASSERT_TRUE(std::filesystem::exists(File() + "-reserve"));
  FillDisk();
  ASSERT_FALSE(store->Put(TestPut(TestId(3), c_)));

  auto evicted = store->Evict(TestId(2));
  ASSERT_TRUE(evicted) << evicted.error().message;
  EXPECT_TRUE(*evicted);
  // It took the reserve (too little was freed to take it back yet).
  EXPECT_FALSE(std::filesystem::exists(File() + "-reserve"));
  EXPECT_FALSE(store->Health().reserve_held);
  auto gone = store->Get(TestId(2));
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->has_value());
  EXPECT_EQ(store->Health().problem, StorageProblem::kNone);
  EXPECT_EQ((*store->Totals())->all.live.entries, 1) << "the first entry, which the bare store could not delete";
}

TEST_F(CacheStoreStorageTest, AReadOnlyStoreServesAndRefusesWrites) {
  {
    auto writable = Open(File());
    ASSERT_TRUE(writable);
    ASSERT_TRUE((*writable)->Put(TestPut(TestId(1), a_)));
  }
  auto store = Open("file:" + File() + "?mode=ro");
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ((*store)->Health().problem, StorageProblem::kReadOnly);
  EXPECT_NE((*store)->Health().message.find("read-only"), std::string::npos);
  {
    auto hit = (*store)->Get(TestId(1));  // pins the entry while it lives
    ASSERT_TRUE(hit && hit->has_value());
    EXPECT_EQ((*hit)->entry->executable, a_);
  }
  auto put = (*store)->Put(TestPut(TestId(2), b_));
  ASSERT_FALSE(put);
  EXPECT_EQ(StorageProblemOf(put.error()), StorageProblem::kReadOnly);
  EXPECT_EQ(put.error().code, ErrorCode::kUnavailable);
  auto evicted = (*store)->Evict(TestId(1));
  ASSERT_FALSE(evicted);
  EXPECT_EQ(StorageProblemOf(evicted.error()), StorageProblem::kReadOnly);
  EXPECT_EQ((*(*store)->Totals())->all.live.entries, 1);
}

TEST_F(CacheStoreStorageTest, AWriteLockHeldElsewhereFailsWritesAsBusyAndPasses) {
  CacheStoreOptions options;
  options.path = File();
  options.hot_set_bytes = 0;
  options.reserve_bytes = kReserve;
  options.busy_timeout_ms = 50;
  auto store = CacheStore::Open(std::move(options));
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE((*store)->Put(TestPut(TestId(1), a_)));
  {
    // Another connection (as another process would) holds the write lock.
    auto other = Connection::Open(File(), {});
    ASSERT_TRUE(other) << other.error().message;
    ASSERT_TRUE((*other)->Execute("BEGIN IMMEDIATE"));
    auto put = (*store)->Put(TestPut(TestId(2), b_));
    ASSERT_FALSE(put);
    EXPECT_EQ(StorageProblemOf(put.error()), StorageProblem::kBusy);
    EXPECT_NE(put.error().message.find("stayed locked by another connection for 50 ms"), std::string::npos)
        << put.error().message;
    auto evicted = (*store)->Evict(TestId(1));
    ASSERT_FALSE(evicted);
    EXPECT_EQ(StorageProblemOf(evicted.error()), StorageProblem::kBusy);
    // Passing: the store's health is unchanged, and reads go on.
    EXPECT_EQ((*store)->Health().problem, StorageProblem::kNone);
    auto hit = (*store)->Get(TestId(1));
    ASSERT_TRUE(hit && hit->has_value());
    ASSERT_TRUE((*other)->Execute("ROLLBACK"));
  }
  ASSERT_TRUE((*store)->Put(TestPut(TestId(2), b_)));
  EXPECT_EQ((*(*store)->Totals())->all.live.entries, 2);
}

TEST_F(CacheStoreStorageTest, AReadOnlyStoreOfAnOlderSchemaIsRefusedClearly) {
  {
    auto db = Connection::Open(File(), {});
    ASSERT_TRUE(db);
    ASSERT_TRUE(Migrate(**db, EmbeddedMigrations(), /*target_version=*/3));
  }
  auto store = Open("file:" + File() + "?mode=ro");
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("is read-only and at schema version 3"), std::string::npos)
      << store.error().message;
}

TEST_F(CacheStoreStorageTest, OpensOnAFullDiskAndSaysSo) {
  {
    auto store = OpenQuota();
    ASSERT_TRUE(store->Put(TestPut(TestId(1), a_)));
  }
  std::filesystem::remove(File() + "-reserve");
  FillDisk();
  auto store = OpenQuota();
  StorageHealth health = store->Health();
  EXPECT_FALSE(health.reserve_held);
  EXPECT_NE(health.message.find("delete reserve"), std::string::npos) << health.message;
  auto hit = store->Get(TestId(1));
  ASSERT_TRUE(hit && hit->has_value());
  auto put = store->Put(TestPut(TestId(2), b_));
  ASSERT_FALSE(put);
  EXPECT_EQ(StorageProblemOf(put.error()), StorageProblem::kFull);
  EXPECT_EQ(put.error().code, ErrorCode::kResourceExhausted);
}

TEST_F(CacheStoreStorageTest, ANewStoreOnAFullDiskFailsToOpenSayingSo) {
  SetQuotaBytes(1);
  auto store = Open(QuotaVfsUri(File()));
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("full"), std::string::npos) << store.error().message;
}

}  // namespace
}  // namespace kiln::cache
