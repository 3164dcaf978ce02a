// CacheStore::ExportBundle and ImportBundle: what moves, what is counted
// present or conflicting, and that an import is idempotent.
#include <gtest/gtest.h>

#include "cache/bundle_reader.h"
#include "cache/cache_store.h"
#include "cache/sqlite_connection.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

constexpr int64_t kExportDay = 1'764'547'200'000;  // 2025-12-01, Unix ms

class CacheStoreBundleTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> Open(const std::string& name) {
    CacheStoreOptions options;
    options.path = dir_.File(name);
    options.dictionary_training_puts = 0;
    auto store = CacheStore::Open(options);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }
  static TuningRecord Record(std::string tenant, double seconds, int64_t created_ms) {
    TuningRecord record;
    record.tenant = std::move(tenant);
    record.workload_key = Hash128{7, 7}.Hex();
    record.chip = "v5e";
    record.plan = "tile=64";
    record.measured_seconds = seconds;
    record.created_ms = created_ms;
    return record;
  }
  // A source store with two alice entries (one with a request mapping), a
  // bob entry and records of both tenants.
  std::unique_ptr<CacheStore> FilledSource() {
    auto source = Open("source.db");
    for (uint64_t n : {1, 2}) {
      const std::string bytes = TestExecutable(n);
      PutRequest put = TestPut(TestId(n), bytes);
      put.components = {{"entry body", Hash128{n, 1}}};
      if (n == 1) put.request_hash = Hash128{99, 1};
      EXPECT_TRUE(source->Put(put));
    }
    const std::string bob = TestExecutable(3);
    EXPECT_TRUE(source->Put(TestPut(TestId(3, "bob"), bob)));
    EXPECT_TRUE(source->tuning_records().Add(Record("alice", 0.5, kExportDay + 100)));
    TuningRecord old = Record("bob", 0.7, kExportDay + 200);
    old.compiler_version = 0;
    EXPECT_TRUE(source->tuning_records().Add(old));
    return source;
  }
  Bundle ExportAll() {
    BundleReport report;
    auto bundle = FilledSource()->bundles().Export({}, report);
    EXPECT_TRUE(bundle) << bundle.error().ToString();
    return bundle ? std::move(*bundle) : Bundle{};
  }
  TempDir dir_;
};

TEST_F(CacheStoreBundleTest, ImportReproducesTheExportedStore) {
  auto source = FilledSource();
  BundleReport exported;
  auto bundle = source->bundles().Export({}, exported);
  ASSERT_TRUE(bundle) << bundle.error().ToString();
  EXPECT_EQ(exported.entries, 3);
  EXPECT_EQ(exported.records, 2);

  auto target = Open("target.db");
  auto imported = target->bundles().Import(*bundle);
  ASSERT_TRUE(imported) << imported.error().ToString();
  EXPECT_EQ(imported->entries, 3);
  EXPECT_EQ(imported->records, 2);
  EXPECT_EQ(imported->entries_present, 0);

  for (const EntryId& id : {TestId(1), TestId(2), TestId(3, "bob")}) {
    auto want = source->GetMetadata(id);
    auto got = target->GetMetadata(id);
    ASSERT_TRUE(got && *got) << id.ToString();
    EXPECT_EQ((*got)->checksum, (*want)->checksum);
    EXPECT_EQ((*got)->options, (*want)->options);
    EXPECT_EQ((*got)->created_ms, (*want)->created_ms);
    EXPECT_EQ((*got)->compile_seconds, (*want)->compile_seconds);
    EXPECT_EQ(*target->Components(id), *source->Components(id));
    auto hit = target->Get(id);
    ASSERT_TRUE(hit && *hit);
    EXPECT_EQ((*hit)->entry->executable, TestExecutable(id.key.high));
  }
  // The source mapped a request body to entry 1; the bundle says so, and
  // the import does not believe it (bundle.h): no body maps to any entry.
  for (const BundleEntry& entry : bundle->entries) {
    if (entry.metadata.id == TestId(1)) {
      EXPECT_EQ(entry.request_hashes, std::vector<Hash128>{(Hash128{99, 1})});
    }
  }
  auto mapped = target->LookupRequest("alice", Hash128{99, 1}, "v5e", kCompilerFormatVersion);
  ASSERT_TRUE(mapped);
  EXPECT_FALSE(*mapped) << "an imported request hash now answers that body with " << (*mapped)->Hex();
  auto bob_records = target->tuning_records().List({.tenant = "bob"});
  ASSERT_TRUE(bob_records);
  ASSERT_EQ(bob_records->size(), 1u);
  EXPECT_EQ((*bob_records)[0].compiler_version, 0u);  // kept: never reused
  EXPECT_EQ((*bob_records)[0].created_ms, kExportDay + 200);
}

TEST_F(CacheStoreBundleTest, RecordsFromBeforeTenantsMoveAsTheyAre) {
  auto source = Open("source.db");
  {
    auto sql = Connection::Open(dir_.File("source.db"), {});
    ASSERT_TRUE(sql) << sql.error().ToString();
    ASSERT_TRUE((*sql)->Execute("INSERT INTO tuning_records (tenant, workload_key, chip, compiler_version, plan, "
                                "measured_seconds, error, created_ms) VALUES ('', 'w', 'v5e', 0, 'p', 0.5, NULL, 1764547200009)"));
  }
  BundleReport report;
  auto bundle = source->bundles().Export({}, report);
  ASSERT_TRUE(bundle) << bundle.error().ToString();
  auto encoded = EncodeBundle(*bundle);
  ASSERT_TRUE(encoded);
  auto decoded = DecodeBundle(*encoded, bundle->schema_version);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  auto target = Open("target.db");
  auto imported = target->bundles().Import(*decoded);
  ASSERT_TRUE(imported) << imported.error().ToString();
  EXPECT_EQ(imported->records, 1);
  auto counts = target->tuning_records().CountsByTenant();
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->at(""), 1);
}

TEST_F(CacheStoreBundleTest, SecondImportChangesNothing) {
  Bundle bundle = ExportAll();
  auto target = Open("target.db");
  ASSERT_TRUE(target->bundles().Import(bundle));
  auto again = target->bundles().Import(bundle);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->entries, 0);
  EXPECT_EQ(again->records, 0);
  EXPECT_EQ(again->entries_present, 3);
  EXPECT_EQ(again->records_present, 2);
  EXPECT_EQ(target->tuning_records().List({})->size(), 2u);
  EXPECT_EQ(target->Stats()->entries, 3);
}

TEST_F(CacheStoreBundleTest, OtherBytesUnderTheSameKeyAreKeptAndCounted) {
  Bundle bundle = ExportAll();
  auto target = Open("target.db");
  const std::string mine = TestExecutable(50);
  ASSERT_TRUE(target->Put(TestPut(TestId(1), mine)));
  auto imported = target->bundles().Import(bundle);
  ASSERT_TRUE(imported);
  EXPECT_EQ(imported->conflicts, 1);
  EXPECT_EQ(imported->entries, 2);
  auto hit = target->Get(TestId(1));
  ASSERT_TRUE(hit && *hit);
  EXPECT_EQ((*hit)->entry->executable, mine);
}

TEST_F(CacheStoreBundleTest, SelectionPicksTenantKeysAndTime) {
  auto source = FilledSource();
  BundleReport report;
  auto alice = source->bundles().Export({.tenant = "alice"}, report);
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->entries.size(), 2u);
  ASSERT_EQ(alice->records.size(), 1u);
  EXPECT_EQ(alice->records[0].tenant, "alice");

  auto one_key = source->bundles().Export({.keys = {TestId(2).key}}, report);
  ASSERT_TRUE(one_key);
  ASSERT_EQ(one_key->entries.size(), 1u);
  EXPECT_EQ(one_key->entries[0].metadata.id, TestId(2));

  auto future = source->bundles().Export({.since_ms = int64_t{1} << 60}, report);
  ASSERT_TRUE(future);
  EXPECT_TRUE(future->entries.empty());
  EXPECT_TRUE(future->records.empty());
}


TEST_F(CacheStoreBundleTest, AStreamedImportCommitsBatchByBatch) {
  Bundle bundle = ExportAll();
  for (BundleEntry& entry : bundle.entries) entry.frame.clear();  // as an export makes them
  auto encoded = EncodeBundle(bundle);
  ASSERT_TRUE(encoded);
  {
    auto target = Open("streamed.db");
    auto reader = BundleReader::Open(BundleReader::BytesSource(*encoded), CurrentSchemaVersion(),
                                     [](const EntryId&, std::string_view) -> Status { return Ok(); });
    ASSERT_TRUE(reader) << reader.error().ToString();
    auto imported = target->bundles().Import(*reader, {.batch_bytes = 1});  // one entry per transaction
    ASSERT_TRUE(imported) << imported.error().ToString();
    EXPECT_EQ(imported->entries, 3);
    EXPECT_EQ(imported->records, 2);
    auto hit = target->Get(TestId(2));
    ASSERT_TRUE(hit && *hit);
    EXPECT_EQ((*hit)->entry->executable, TestExecutable(2));
  }
  // A bundle damaged in its last entry: what came before is kept, and the
  // error says how much.
  size_t before_bob = 0;  // entries ahead of bob's in the bundle (row order)
  while (bundle.entries[before_bob].metadata.id.tenant != "bob") ++before_bob;
  std::string damaged = *encoded;
  const size_t bob = damaged.find("bob");  // in bob's entry (records follow the entries)
  ASSERT_NE(bob, std::string::npos);
  damaged[bob] = 'B';
  auto target = Open("damaged.db");
  auto reader = BundleReader::Open(BundleReader::BytesSource(damaged), CurrentSchemaVersion(),
                                   [](const EntryId&, std::string_view) -> Status { return Ok(); });
  ASSERT_TRUE(reader);
  auto imported = target->bundles().Import(*reader, {.batch_bytes = 1});
  ASSERT_FALSE(imported);
  EXPECT_NE(imported.error().ToString().find("after importing " + std::to_string(before_bob) + " entries"),
            std::string::npos)
      << imported.error().ToString();
  EXPECT_EQ(target->Stats()->entries, static_cast<int64_t>(before_bob));
}

TEST_F(CacheStoreBundleTest, AnImportMayFileEverythingUnderOneTenant) {
  Bundle bundle = ExportAll();
  auto target = Open("target.db");
  auto imported = target->bundles().Import(bundle, {.tenant = "carol"});
  ASSERT_TRUE(imported) << imported.error().ToString();
  EXPECT_EQ(imported->entries, 3);
  // bob's entry 3 and alice's 1 and 2, all carol's now.
  for (uint64_t n : {1, 2, 3}) {
    auto got = target->GetMetadata(TestId(n, "carol"));
    ASSERT_TRUE(got && *got) << n;
  }
  EXPECT_FALSE(*target->GetMetadata(TestId(1)));
  EXPECT_EQ(target->tuning_records().List({.tenant = "carol"})->size(), 2u);
  auto refused = target->bundles().Import(bundle, {.tenant = "../../etc"});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is not a name"), std::string::npos) << refused.error().ToString();
}

}  // namespace
}  // namespace kiln::cache
