#include "cache/migrations.h"

#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/checksum.h"
#include "cache/store_rows.h"
#include "cache/testing/test_store.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;

std::unique_ptr<Connection> OpenRaw(const std::string& path) {
  auto db = Connection::Open(path, {});
  EXPECT_TRUE(db) << db.error().message;
  return db ? std::move(*db) : nullptr;
}

TEST(MigrationsTest, EmbeddedMigrationsAreNumberedWithoutGaps) {
  auto migrations = EmbeddedMigrations();
  ASSERT_GE(migrations.size(), 3u);
  for (size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i) + 1);
    EXPECT_FALSE(migrations[i].sql.empty());
  }
  EXPECT_EQ(migrations[0].name, "0001_initial.sql");
}

TEST(MigrationsTest, FreshDatabaseReachesLatestWithIncrementalVacuum) {
  TempDir dir;
  auto db = OpenRaw(dir.File("c.db"));
  ASSERT_TRUE(Migrate(*db, EmbeddedMigrations()));
  EXPECT_EQ(*SchemaVersion(*db), LatestVersion(EmbeddedMigrations()));
  EXPECT_EQ(*db->QueryInt("PRAGMA auto_vacuum"), 2);  // INCREMENTAL
  // Idempotent.
  ASSERT_TRUE(Migrate(*db, EmbeddedMigrations()));
  EXPECT_EQ(*SchemaVersion(*db), LatestVersion(EmbeddedMigrations()));
}

// Creates a database at version k, fills it with data valid at version 1
// (present in every later schema), migrates to the latest and checks that
// the store still serves it intact.
TEST(MigrationsTest, EveryEarlierVersionMigratesWithDataPreserved) {
  const int latest = LatestVersion(EmbeddedMigrations());
  for (int k = 0; k < latest; ++k) {
    SCOPED_TRACE("from version " + std::to_string(k));
    TempDir dir;
    const std::string path = dir.File("c.db");
    const std::string executable = TestExecutable(k, 10'000);
    const EntryId id = TestId(100 + k);
    {
      auto db = OpenRaw(path);
      ASSERT_TRUE(Migrate(*db, EmbeddedMigrations(), k));
      ASSERT_EQ(*SchemaVersion(*db), k);
      if (k >= 1) {
        auto frame = ZstdCompress(executable, 3, nullptr);
        ASSERT_TRUE(frame);
        auto insert = db->Prepare(
            "INSERT INTO entries (id, tenant, key, chip, format_version, options, plan_kind, "
            "raw_bytes, stored_bytes, checksum, compile_seconds, device_seconds, created_ms, last_hit_ms, "
            "hit_count) VALUES (?5, ?1, ?2, ?3, ?4, 'o', 'tuned', ?6, ?7, ?8, 42.0, 0.5, 1000, 2000, 3)");
        ASSERT_TRUE(insert);
        insert->BindText(1, id.tenant).BindText(2, id.key.Hex()).BindText(3, id.chip);
        insert->Bind(4, int64_t{id.format_version}).Bind(5, EntryRowId(id));
        insert->Bind(6, static_cast<int64_t>(executable.size())).Bind(7, static_cast<int64_t>(frame->size()));
        insert->Bind(8, static_cast<int64_t>(ExecutableChecksum(executable)));
        ASSERT_TRUE(insert->Run());
        auto bytes = db->Prepare("INSERT INTO executables (entry_id, frame) VALUES (?1, ?2)");
        ASSERT_TRUE(bytes);
        ASSERT_TRUE(bytes->Bind(1, EntryRowId(id)).BindBlob(2, *frame).Run());
        ASSERT_TRUE(db->Execute(
            "INSERT INTO key_components VALUES (" + std::to_string(EntryRowId(id)) +
            ", 'entry body', '0000000000000000000000000000abcd');"
            "INSERT INTO request_keys VALUES ('alice', '000000000000000000000000000000ff', 'v5e', 1, '" +
            id.key.Hex() + "');"
            "INSERT INTO tuning_records (workload_key, chip, plan, measured_seconds, created_ms) "
            "VALUES ('w', 'v5e', 'tile=128', 0.25, 5)"));
      }
    }
    CacheStoreOptions options;
    options.path = path;
    auto store = CacheStore::Open(options);
    ASSERT_TRUE(store) << store.error().message;
    {
      auto db = OpenRaw(path);
      EXPECT_EQ(*SchemaVersion(*db), latest);
    }
    if (k == 0) continue;
    auto hit = (*store)->Get(id);
    ASSERT_TRUE(hit) << hit.error().message;
    ASSERT_TRUE(hit->has_value());
    EXPECT_EQ((*hit)->entry->executable, executable);
    const EntryMetadata& metadata = (*hit)->entry->metadata;
    EXPECT_EQ(metadata.plan_kind, PlanKind::kTuned);
    EXPECT_EQ(metadata.compile_seconds, 42.0);
    EXPECT_EQ(metadata.hit_count, 3);
    EXPECT_FALSE(metadata.quarantined);
    EXPECT_EQ(metadata.dictionary_id, 0u);
    auto components = (*store)->Components(id);
    ASSERT_TRUE(components);
    ASSERT_EQ(components->size(), 1u);
    EXPECT_EQ((*components)[0].name, "entry body");
    auto mapped = (*store)->LookupRequest("alice", Hash128{0, 0xff}, "v5e", 1);
    ASSERT_TRUE(mapped && mapped->has_value());
    EXPECT_EQ(**mapped, id.key);
    auto best = (*store)->BestTuningRecord("w", "v5e");
    ASSERT_TRUE(best && best->has_value());
    EXPECT_EQ((*best)->plan, "tile=128");
  }
}

TEST(MigrationsTest, RefusesNewerDatabaseAndGoingBack) {
  TempDir dir;
  auto db = OpenRaw(dir.File("c.db"));
  ASSERT_TRUE(Migrate(*db, EmbeddedMigrations()));
  auto back = Migrate(*db, EmbeddedMigrations(), 1);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("forward-only"), std::string::npos) << back.error().message;

  ASSERT_TRUE(db->Execute("PRAGMA user_version=999"));
  auto newer = Migrate(*db, EmbeddedMigrations());
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("newer"), std::string::npos) << newer.error().message;
  db.reset();
  CacheStoreOptions options;
  options.path = dir.File("c.db");
  EXPECT_FALSE(CacheStore::Open(options));
}

TEST(MigrationsTest, RejectsGapsAndRollsBackAFailingMigration) {
  TempDir dir;
  auto db = OpenRaw(dir.File("c.db"));
  const Migration gap[] = {{1, "0001_a.sql", "CREATE TABLE a (x)"}, {3, "0003_c.sql", "CREATE TABLE c (x)"}};
  auto gapped = Migrate(*db, gap);
  ASSERT_FALSE(gapped);
  EXPECT_NE(gapped.error().message.find("0003_c.sql"), std::string::npos);

  const Migration failing[] = {{1, "0001_a.sql", "CREATE TABLE a (x)"},
                               {2, "0002_b.sql", "CREATE TABLE b (x); INSERT INTO nowhere VALUES (1)"}};
  auto failed = Migrate(*db, failing);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("0002_b.sql"), std::string::npos) << failed.error().message;
  EXPECT_EQ(*SchemaVersion(*db), 1);
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'b'"), 0);
}

}  // namespace
}  // namespace kiln::cache
