// Integrity: corrupt bytes are detected on read, quarantined, never served,
// counted, and replaced by the caller's recompile.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "cache/cache_store.h"
#include "cache/checksum.h"
#include "cache/store_rows.h"
#include "cache/testing/test_store.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {
namespace {

using testing::RandomBytes;
using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class CacheStoreIntegrityTest : public ::testing::Test {
 protected:
  std::string Path() const { return dir_.File("cache.db"); }
  std::unique_ptr<CacheStore> OpenStore() {
    CacheStoreOptions options;
    options.path = Path();
    auto store = CacheStore::Open(std::move(options));
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }
  void Sql(const std::string& sql) {
    auto db = Connection::Open(Path(), {});
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->Execute(sql)) << sql;
  }

  TempDir dir_;
};

TEST_F(CacheStoreIntegrityTest, BlobCorruptedOnDiskIsDetectedNotServedAndRecompiled) {
  // Incompressible bytes: zstd keeps them as raw blocks, so they can be
  // found in the file.
  const std::string executable = RandomBytes(7, 20'000);
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(TestPut(TestId(7), executable)));
    ASSERT_TRUE(store->Put(TestPut(TestId(8), RandomBytes(8, 20'000))));
  }  // closing the last connection checkpoints the WAL into the file
  {
    std::ifstream in(Path(), std::ios::binary);
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = file.find(executable.substr(10'000, 64));
    ASSERT_NE(at, std::string::npos) << "blob not found in the database file";
    file[at + 32] ^= 0x01;  // one flipped bit
    std::ofstream out(Path(), std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  auto store = OpenStore();
  auto hit = store->Get(TestId(7));
  ASSERT_TRUE(hit) << hit.error().message;
  EXPECT_FALSE(hit->has_value()) << "corrupt executable was served";
  auto stats = store->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->quarantined_total, 1);
  EXPECT_EQ(stats->quarantined_entries, 1);
  EXPECT_EQ(stats->misses, 1);
  auto quarantined = store->List({.quarantined_only = true});
  ASSERT_TRUE(quarantined);
  ASSERT_EQ(quarantined->size(), 1u);
  EXPECT_EQ((*quarantined)[0].id, TestId(7));
  // Never served again, counted once.
  EXPECT_FALSE(store->Get(TestId(7))->has_value());
  EXPECT_EQ(store->Stats()->quarantined_total, 1);
  // The neighbour is intact.
  auto neighbour = store->Get(TestId(8));
  ASSERT_TRUE(neighbour && neighbour->has_value());
  EXPECT_EQ((*neighbour)->entry->executable, RandomBytes(8, 20'000));
  // The caller recompiles and stores a good copy, which is served.
  ASSERT_TRUE(store->Put(TestPut(TestId(7), executable)));
  store.reset();
  store = OpenStore();
  auto recompiled = store->Get(TestId(7));
  ASSERT_TRUE(recompiled && recompiled->has_value());
  EXPECT_EQ((*recompiled)->entry->executable, executable);
  EXPECT_FALSE((*recompiled)->entry->metadata.quarantined);
  EXPECT_EQ(store->Stats()->quarantined_entries, 0);
}

TEST_F(CacheStoreIntegrityTest, ChecksumMismatchOfValidFrameIsQuarantined) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  }
  // A well-formed zstd frame of other bytes with the same size: only the
  // checksum can tell.
  const std::string other = TestExecutable(2);
  auto frame = ZstdCompress(other, 3, nullptr);
  ASSERT_TRUE(frame);
  {
    auto db = Connection::Open(Path(), {});
    ASSERT_TRUE(db);
    auto update = (*db)->Prepare("UPDATE executables SET frame = ?1");
    ASSERT_TRUE(update);
    ASSERT_TRUE(update->BindBlob(1, *frame).Run());
    ASSERT_TRUE((*db)->Execute("UPDATE entries SET stored_bytes = " + std::to_string(frame->size())));
  }
  auto store = OpenStore();
  EXPECT_FALSE(store->Get(TestId(1))->has_value());
  EXPECT_EQ(store->Stats()->quarantined_total, 1);
}

TEST_F(CacheStoreIntegrityTest, VerifyAllWalksEveryEntry) {
  auto store = OpenStore();
  for (uint64_t i = 0; i < 150; ++i) ASSERT_TRUE(store->Put(TestPut(TestId(i), TestExecutable(i, 3000))));
  auto clean = store->VerifyAll();
  ASSERT_TRUE(clean) << clean.error().message;
  EXPECT_EQ(clean->checked, 150);
  EXPECT_EQ(clean->ok, 150);
  EXPECT_TRUE(clean->newly_quarantined.empty());
  EXPECT_EQ(clean->integrity_check, "ok");

  Sql("UPDATE entries SET checksum = checksum + 1 WHERE key = '" + TestId(5).key.Hex() + "'");
  Sql("UPDATE executables SET frame = x'00010203' WHERE entry_id = (SELECT id FROM entries WHERE key = '" +
      TestId(77).key.Hex() + "')");
  Sql("UPDATE entries SET raw_bytes = raw_bytes + 1 WHERE key = '" + TestId(140).key.Hex() + "'");
  auto report = store->VerifyAll();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->checked, 150);
  EXPECT_EQ(report->ok, 147);
  std::vector<std::string> bad;
  for (const EntryMetadata& entry : report->newly_quarantined) bad.push_back(entry.id.ToString());
  std::sort(bad.begin(), bad.end());
  std::vector<std::string> expected = {TestId(5).ToString(), TestId(77).ToString(), TestId(140).ToString()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(bad, expected);
  // Quarantined entries leave the hot set too: never served.
  EXPECT_FALSE(store->Get(TestId(5))->has_value());
  EXPECT_TRUE(store->Get(TestId(6))->has_value());
  auto again = store->VerifyAll();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->already_quarantined, 3);
  EXPECT_TRUE(again->newly_quarantined.empty());
  EXPECT_EQ(store->Stats()->quarantined_total, 3);
}

TEST_F(CacheStoreIntegrityTest, MalformedRowIsAnErrorNotACrash) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  Sql("UPDATE entries SET plan_kind = 'given', key = 'zz'");
  auto listed = store->List({});
  ASSERT_FALSE(listed);
  EXPECT_NE(listed.error().message.find("zz"), std::string::npos) << listed.error().message;
  EXPECT_EQ(listed.error().code, ErrorCode::kDataLoss);
}

TEST_F(CacheStoreIntegrityTest, RowIdCollisionNeverServesTheWrongEntry) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  // Give another identity the row id that TestId(2) hashes to.
  const std::string taken = std::to_string(EntryRowId(TestId(2)));
  Sql("PRAGMA foreign_keys=OFF; UPDATE entries SET id = " + taken + "; UPDATE executables SET entry_id = " + taken);
  store.reset();
  store = OpenStore();
  EXPECT_FALSE(store->Get(TestId(2))->has_value());
  auto put = store->Put(TestPut(TestId(2), TestExecutable(2)));
  ASSERT_FALSE(put);
  EXPECT_NE(put.error().message.find("collides"), std::string::npos) << put.error().message;
  EXPECT_EQ(put.error().code, ErrorCode::kAlreadyExists);
  EXPECT_FALSE(store->Get(TestId(2))->has_value());
}

TEST_F(CacheStoreIntegrityTest, LookupIsOneRowidSearch) {
  auto store = OpenStore();
  auto db = Connection::Open(Path(), {});
  ASSERT_TRUE(db);
  auto plan = (*db)->Prepare(
      "EXPLAIN QUERY PLAN SELECT frame FROM entries JOIN executables ON entry_id = id WHERE id = 5 AND "
      "tenant = 'a' AND key = 'k' AND chip = 'c' AND format_version = 1 AND quarantined = 0");
  ASSERT_TRUE(plan);
  std::string details;
  while (*plan->Step()) details += std::string(plan->ColumnText(3)) + "\n";
  EXPECT_NE(details.find("SEARCH entries USING INTEGER PRIMARY KEY"), std::string::npos) << details;
  EXPECT_NE(details.find("SEARCH executables USING INTEGER PRIMARY KEY"), std::string::npos) << details;
}

}  // namespace
}  // namespace kiln::cache
