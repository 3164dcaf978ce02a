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

// Inserts an entry row and its executable as schema version 1 has them
// (valid in every later schema): compiled in 42 s, 0.5 s per run, created at
// 1000 ms, last hit at 2000 ms, 3 hits.
void InsertEntryRow(Connection& db, const EntryId& id, const std::string& executable, const std::string& options,
                    const std::string& plan_kind) {
  auto frame = ZstdCompress(executable, 3, nullptr);
  ASSERT_TRUE(frame);
  auto insert = db.Prepare(
      "INSERT INTO entries (id, tenant, key, chip, format_version, options, plan_kind, raw_bytes, stored_bytes, "
      "checksum, compile_seconds, device_seconds, created_ms, last_hit_ms, hit_count) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 42.0, 0.5, 1000, 2000, 3)");
  ASSERT_TRUE(insert);
  insert->Bind(1, EntryRowId(id)).BindText(2, id.tenant).BindText(3, id.key.Hex()).BindText(4, id.chip);
  insert->Bind(5, int64_t{id.format_version}).BindText(6, options).BindText(7, plan_kind);
  insert->Bind(8, static_cast<int64_t>(executable.size())).Bind(9, static_cast<int64_t>(frame->size()));
  insert->Bind(10, static_cast<int64_t>(ExecutableChecksum(executable)));
  ASSERT_TRUE(insert->Run());
  auto bytes = db.Prepare("INSERT INTO executables (entry_id, frame) VALUES (?1, ?2)");
  ASSERT_TRUE(bytes);
  ASSERT_TRUE(bytes->Bind(1, EntryRowId(id)).BindBlob(2, *frame).Run());
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
        InsertEntryRow(*db, id, executable, "o", "tuned");
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
    auto mapped = (*store)->LookupRequest("alice", Hash128{0, 0xff}, "v5e", 1);  // as inserted above
    ASSERT_TRUE(mapped && mapped->has_value());
    EXPECT_EQ(**mapped, id.key);
    // A record from before tuning records had a tenant and a compiler
    // version survives, but is never reused (0006).
    auto records = (*store)->tuning_records().List({.workload_key = "w"});
    ASSERT_TRUE(records);
    ASSERT_EQ(records->size(), 1u);
    EXPECT_EQ((*records)[0].plan, "tile=128");
    EXPECT_EQ((*records)[0].measured_seconds, 0.25);
    EXPECT_EQ((*records)[0].compiler_version, 0u);
    EXPECT_EQ((*records)[0].tenant, "");
    EXPECT_FALSE((*store)->tuning_records().Best("alice", "w", "v5e")->has_value());
  }
}

// Before 0005 a plan-none executable was stored as 'heuristic'. A store made
// by the old schema, whose entries' options say which plan compiled them,
// migrates: those rows become 'none', everything else keeps its kind, and
// every entry keeps its bytes, components and totals (the table rebuild must
// not cascade-delete what references it).
TEST(MigrationsTest, PlanNoneEntriesStoredAsHeuristicBecomeNone) {
  struct OldRow {
    const char* options;
    const char* plan_kind;
    PlanKind migrated;
  };
  const OldRow rows[] = {
      {R"({"options":{"plan":"none","scoped_vmem_bytes":0},"kernels":[]})", "heuristic", PlanKind::kNone},
      {R"({"options":{"plan":"heuristic","scoped_vmem_bytes":0},"kernels":[]})", "heuristic", PlanKind::kHeuristic},
      {R"({"plan":"none","scoped_vmem_bytes":0})", "heuristic", PlanKind::kNone},  // bare options
      {R"({"options":{"plan":"given"}})", "given", PlanKind::kGiven},
      {R"({"options":{"plan":"none"}})", "tuned", PlanKind::kTuned},  // only heuristic rows were mislabelled
      {"opt_level=2", "heuristic", PlanKind::kHeuristic},             // not JSON: nothing tells
      {R"({"options":{}})", "heuristic", PlanKind::kHeuristic},
  };
  TempDir dir;
  const std::string path = dir.File("c.db");
  {
    auto db = OpenRaw(path);
    ASSERT_TRUE(Migrate(*db, EmbeddedMigrations(), 4));
    for (size_t i = 0; i < std::size(rows); ++i) {
      const EntryId id = TestId(200 + i);
      InsertEntryRow(*db, id, TestExecutable(i, 1000), rows[i].options, rows[i].plan_kind);
      ASSERT_TRUE(db->Execute("INSERT INTO key_components VALUES (" + std::to_string(EntryRowId(id)) +
                              ", 'entry body', '0000000000000000000000000000abcd')"));
    }
    // The old schema refuses the new name.
    EXPECT_FALSE(db->Execute("UPDATE entries SET plan_kind = 'none'"));
  }
  CacheStoreOptions options;
  options.path = path;
  auto store = CacheStore::Open(options);
  ASSERT_TRUE(store) << store.error().message;
  for (size_t i = 0; i < std::size(rows); ++i) {
    SCOPED_TRACE(rows[i].options);
    const EntryId id = TestId(200 + i);
    auto hit = (*store)->Get(id);
    ASSERT_TRUE(hit) << hit.error().message;
    ASSERT_TRUE(hit->has_value());
    EXPECT_EQ((*hit)->entry->executable, TestExecutable(i, 1000));
    EXPECT_EQ((*hit)->entry->metadata.plan_kind, rows[i].migrated);
    EXPECT_EQ((*hit)->entry->metadata.options, rows[i].options);
    auto components = (*store)->Components(id);
    ASSERT_TRUE(components);
    EXPECT_EQ(components->size(), 1u);
  }
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->entries, static_cast<int64_t>(std::size(rows)));

  // The rebuilt table's triggers keep the totals, and a none plan is stored
  // as none.
  const std::string executable = TestExecutable(99, 500);
  PutRequest put = testing::TestPut(TestId(299), executable);
  put.plan_kind = PlanKind::kNone;
  ASSERT_TRUE((*store)->Put(put));
  auto metadata = (*store)->GetMetadata(TestId(299));
  ASSERT_TRUE(metadata && metadata->has_value());
  EXPECT_EQ((*metadata)->plan_kind, PlanKind::kNone);
  stats = (*store)->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, static_cast<int64_t>(std::size(rows)) + 1);
  ASSERT_TRUE((*store)->Evict(TestId(200)));
  EXPECT_EQ(*OpenRaw(path)->QueryInt("SELECT count(*) FROM executables"), static_cast<int64_t>(std::size(rows)));
}

// 0006 gives every tuning record a tenant and a compiler version: rows from
// before get '' and 0, so they stay listed but never start a search, and
// records added after are scoped.
TEST(MigrationsTest, TuningRecordsFromBeforeScopesGetNoTenantAndVersionZero) {
  TempDir dir;
  const std::string path = dir.File("c.db");
  {
    auto db = OpenRaw(path);
    ASSERT_TRUE(Migrate(*db, EmbeddedMigrations(), 5));
    ASSERT_TRUE(db->Execute(
        "INSERT INTO tuning_records (workload_key, chip, plan, measured_seconds, error, created_ms) VALUES "
        "('w', 'v5e', 'fast', 0.1, NULL, 1), ('w', 'v5e', 'broken', NULL, 'VMEM overflow', 2)"));
  }
  CacheStoreOptions options;
  options.path = path;
  auto store = CacheStore::Open(options);
  ASSERT_TRUE(store) << store.error().message;
  auto old = (*store)->tuning_records().List({.tenant = ""});
  ASSERT_TRUE(old);
  ASSERT_EQ(old->size(), 2u);
  EXPECT_EQ((*old)[0].plan, "broken");
  EXPECT_EQ((*old)[0].error, "VMEM overflow");
  EXPECT_EQ((*old)[1].plan, "fast");
  for (const TuningRecord& r : *old) EXPECT_EQ(r.compiler_version, 0u);
  EXPECT_EQ(*(*store)->tuning_records().CountsByTenant(), (std::map<std::string, int64_t>{{"", 2}}));

  // The old fast record is not alice's, nor this compiler's.
  EXPECT_FALSE((*store)->tuning_records().Best("alice", "w", "v5e")->has_value());
  ASSERT_TRUE((*store)->tuning_records().Add(
      {.tenant = "alice", .workload_key = "w", .chip = "v5e", .plan = "new", .measured_seconds = 0.5}));
  auto best = (*store)->tuning_records().Best("alice", "w", "v5e");
  ASSERT_TRUE(best && best->has_value());
  EXPECT_EQ((*best)->plan, "new");
  EXPECT_EQ(*OpenRaw(path)->QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'tuning_records_by_scope'"),
            1);
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
