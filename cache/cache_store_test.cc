#include "cache/cache_store.h"

#include <gtest/gtest.h>

#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class CacheStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> OpenStore(uint64_t hot_set_bytes = 1 << 20) {
    CacheStoreOptions options;
    options.path = dir_.File("cache.db");
    options.hot_set_bytes = hot_set_bytes;
    options.clock = [this] { return now_ms_; };
    auto store = CacheStore::Open(std::move(options));
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }

  TempDir dir_;
  int64_t now_ms_ = 1'700'000'000'000;
};

TEST_F(CacheStoreTest, PutThenGetFromMemoryAndAfterReopenFromDisk) {
  const std::string executable = TestExecutable(1, 50'000);
  PutRequest put = TestPut(TestId(1), executable, 12.5);
  put.plan_kind = PlanKind::kTuned;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(put));
    auto hit = store->Get(TestId(1));
    ASSERT_TRUE(hit) << hit.error().message;
    ASSERT_TRUE(hit->has_value());
    EXPECT_TRUE((*hit)->from_memory);
    EXPECT_EQ((*hit)->entry->executable, executable);
  }
  auto store = OpenStore();
  auto hit = store->Get(TestId(1));
  ASSERT_TRUE(hit && hit->has_value());
  EXPECT_FALSE((*hit)->from_memory);
  EXPECT_EQ((*hit)->entry->executable, executable);
  const EntryMetadata& metadata = (*hit)->entry->metadata;
  EXPECT_EQ(metadata.plan_kind, PlanKind::kTuned);
  EXPECT_EQ(metadata.options, "opt_level=2");
  EXPECT_EQ(metadata.raw_bytes, executable.size());
  EXPECT_LT(metadata.stored_bytes, executable.size());
  EXPECT_EQ(metadata.compile_seconds, 12.5);
  EXPECT_EQ(metadata.created_ms, now_ms_);
  // A second read is served by the hot set.
  auto again = store->Get(TestId(1));
  ASSERT_TRUE(again && again->has_value());
  EXPECT_TRUE((*again)->from_memory);
}

TEST_F(CacheStoreTest, MissesOtherChipFormatVersionAndTenant) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  EXPECT_FALSE(store->Get(TestId(1, "alice", "v4"))->has_value());
  EntryId newer = TestId(1);
  newer.format_version = kCompilerFormatVersion + 1;
  EXPECT_FALSE(store->Get(newer)->has_value());
  EXPECT_FALSE(store->Get(TestId(1, "bob"))->has_value());
  EXPECT_FALSE(store->Get(TestId(2))->has_value());
  // Also after a reopen (no hot set): SQLite lookups are exact too.
  store.reset();
  store = OpenStore();
  EXPECT_FALSE(store->Get(TestId(1, "alice", "v4"))->has_value());
  EXPECT_FALSE(store->Get(newer)->has_value());
  EXPECT_TRUE(store->Get(TestId(1))->has_value());
  auto stats = store->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->misses, 2);
  EXPECT_EQ(stats->disk_hits, 1);
}

TEST_F(CacheStoreTest, NamespacesNeverFallThrough) {
  auto store = OpenStore();
  const std::string executable = TestExecutable(3);
  ASSERT_TRUE(store->Put(TestPut(TestId(3, "shared"), executable)));
  auto other = store->Get(TestId(3, "bob"));
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->has_value()) << "bob's namespace does not include the shared one";
  EXPECT_EQ(store->TryGetHot(TestId(3, "bob")).entry, nullptr);
  auto hit = store->Get(TestId(3, "shared"));
  ASSERT_TRUE(hit && hit->has_value());
  EXPECT_EQ((*hit)->entry->executable, executable);
  EXPECT_EQ((*hit)->entry->metadata.id.tenant, "shared");
}

TEST_F(CacheStoreTest, RejectsBadArguments) {
  auto store = OpenStore();
  auto put = store->Put(TestPut(TestId(1, ""), "x"));
  ASSERT_FALSE(put);
  EXPECT_NE(put.error().message.find("tenant"), std::string::npos);
  EXPECT_FALSE(store->Get(TestId(1, "alice", "")));
}

TEST_F(CacheStoreTest, ReplacingAnEntryServesTheNewBytes) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(2))));
  EXPECT_EQ((*store->Get(TestId(1)))->entry->executable, TestExecutable(2));
  store.reset();
  store = OpenStore();
  EXPECT_EQ((*store->Get(TestId(1)))->entry->executable, TestExecutable(2));
  EXPECT_EQ(store->Stats()->entries, 1);
}

TEST_F(CacheStoreTest, MapsRequestBodyHashToKey) {
  auto store = OpenStore();
  const std::string executable = TestExecutable(5);
  PutRequest put = TestPut(TestId(5), executable);
  put.request_hash = Hash128{11, 22};
  ASSERT_TRUE(store->Put(put));
  auto key = store->LookupRequest("alice", Hash128{11, 22}, "v5e", kCompilerFormatVersion);
  ASSERT_TRUE(key && key->has_value());
  EXPECT_EQ(**key, TestId(5).key);
  EXPECT_FALSE(store->LookupRequest("alice", Hash128{11, 22}, "v4", 1)->has_value());
  EXPECT_FALSE(store->LookupRequest("bob", Hash128{11, 22}, "v5e", kCompilerFormatVersion)->has_value());
  EXPECT_FALSE(store->LookupRequest("alice", Hash128{11, 23}, "v5e", kCompilerFormatVersion)->has_value());

  // Deleting the entry forgets the bodies that named it (they would pile up).
  ASSERT_TRUE(store->Evict(TestId(5)));
  EXPECT_FALSE(store->LookupRequest("alice", Hash128{11, 22}, "v5e", kCompilerFormatVersion)->has_value());
}

TEST_F(CacheStoreTest, CountsHitsAndLastUse) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(TestPut(TestId(1), TestExecutable(1))));
  now_ms_ += 5000;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store->Get(TestId(1))->has_value());
  auto metadata = store->GetMetadata(TestId(1));
  ASSERT_TRUE(metadata && metadata->has_value());
  EXPECT_EQ((*metadata)->hit_count, 3);
  EXPECT_EQ((*metadata)->last_hit_ms, now_ms_);
  EXPECT_EQ((*metadata)->created_ms, now_ms_ - 5000);
}

TEST_F(CacheStoreTest, ListsWithFiltersAndPaging) {
  auto store = OpenStore();
  for (uint64_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(store->Put(TestPut(TestId(i, i % 2 ? "bob" : "alice", i < 3 ? "v5e" : "v4"), TestExecutable(i))));
  }
  EXPECT_EQ(store->List({})->size(), 6u);
  EXPECT_EQ(store->List({.tenant = "bob"})->size(), 3u);
  EXPECT_EQ(store->List({.tenant = "alice", .chip = "v4"})->size(), 1u);
  EXPECT_EQ(store->List({.key_prefix = TestId(2).key.Hex().substr(0, 16)})->size(), 1u);
  auto first = store->List({.limit = 4});
  ASSERT_EQ(first->size(), 4u);
  auto rest = store->List({.after_row_id = first->back().row_id, .limit = 4});
  EXPECT_EQ(rest->size(), 2u);
  EXPECT_TRUE(store->List({.quarantined_only = true})->empty());
}

TuningRecord Record(std::string tenant, std::string workload, std::string chip, std::string plan,
                    std::optional<double> seconds, int64_t created_ms, std::optional<std::string> error = std::nullopt) {
  return {.tenant = std::move(tenant), .workload_key = std::move(workload), .chip = std::move(chip),
          .plan = std::move(plan), .measured_seconds = seconds, .error = std::move(error), .created_ms = created_ms};
}

TEST_F(CacheStoreTest, TuningRecordsNewestFirstAndBestSuccessful) {
  auto store = OpenStore();
  ASSERT_TRUE(store->tuning_records().Add(Record("alice", "w1", "v5e", "tile=64", 0.30, 1)));
  ASSERT_TRUE(store->tuning_records().Add(Record("alice", "w1", "v5e", "tile=128", 0.20, 2)));
  ASSERT_TRUE(store->tuning_records().Add(Record("alice", "w1", "v5e", "tile=512", std::nullopt, 3, "VMEM overflow")));
  ASSERT_TRUE(store->tuning_records().Add(Record("alice", "w1", "v4", "tile=256", 0.01, 4)));
  EXPECT_FALSE(store->tuning_records().Add(Record("alice", "w1", "v5e", "both", 0.1, 5, "error too")));
  auto records = store->tuning_records().List({.tenant = "alice", .workload_key = "w1", .chip = "v5e"});
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].plan, "tile=512");
  EXPECT_EQ((*records)[0].error, "VMEM overflow");
  EXPECT_EQ((*records)[0].compiler_version, kCompilerFormatVersion);
  EXPECT_GT((*records)[0].id, 0);
  auto best = store->tuning_records().Best("alice", "w1", "v5e");
  ASSERT_TRUE(best && best->has_value());
  EXPECT_EQ((*best)->plan, "tile=128");
  EXPECT_FALSE(store->tuning_records().Best("alice", "w2", "v5e")->has_value());
}

TEST_F(CacheStoreTest, TuningRecordsAreScopedByTenantAndCompilerVersion) {
  auto store = OpenStore();
  ASSERT_TRUE(store->tuning_records().Add(Record("alice", "w", "v5e", "alice-slow", 0.30, 1)));
  ASSERT_TRUE(store->tuning_records().Add(Record("bob", "w", "v5e", "bob-fast", 0.01, 2)));
  TuningRecord older = Record("alice", "w", "v5e", "older-compiler", 0.001, 3);
  older.compiler_version = kCompilerFormatVersion - 1;
  ASSERT_TRUE(store->tuning_records().Add(older));
  // Another tenant's faster record and an older compiler's are never the best.
  auto best = store->tuning_records().Best("alice", "w", "v5e");
  ASSERT_TRUE(best && best->has_value());
  EXPECT_EQ((*best)->plan, "alice-slow");
  EXPECT_EQ((*best)->tenant, "alice");
  auto bobs = store->tuning_records().Best("bob", "w", "v5e");
  ASSERT_TRUE(bobs && bobs->has_value());
  EXPECT_EQ((*bobs)->plan, "bob-fast");
  EXPECT_FALSE(store->tuning_records().Best("carol", "w", "v5e")->has_value());
  EXPECT_FALSE(store->tuning_records().Best("", "w", "v5e"));
  EXPECT_FALSE(store->tuning_records().Add(Record("", "w", "v5e", "p", 0.1, 4)));
  // Listing one tenant's shows none of the others'.
  auto alices = store->tuning_records().List({.tenant = "alice"});
  ASSERT_TRUE(alices);
  ASSERT_EQ(alices->size(), 2u);
  for (const TuningRecord& r : *alices) EXPECT_EQ(r.tenant, "alice");
  EXPECT_EQ(store->tuning_records().List({.compiler_version = kCompilerFormatVersion - 1})->size(), 1u);
  EXPECT_EQ(store->tuning_records().List({.limit = 1})->size(), 1u);

  auto counts = store->tuning_records().CountsByTenant();
  ASSERT_TRUE(counts);
  EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"alice", 2}, {"bob", 1}}));
  auto deleted = store->tuning_records().DeleteTenant("alice");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(*deleted, 2);
  EXPECT_EQ(*store->tuning_records().CountsByTenant(), (std::map<std::string, int64_t>{{"bob", 1}}));
  EXPECT_FALSE(store->tuning_records().Best("alice", "w", "v5e")->has_value());
  EXPECT_TRUE(store->tuning_records().Best("bob", "w", "v5e")->has_value());
  EXPECT_EQ(*store->tuning_records().DeleteTenant("alice"), 0);
}

TEST_F(CacheStoreTest, HotSetIsBoundedByBytes) {
  auto store = OpenStore(/*hot_set_bytes=*/20'000);
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(store->Put(TestPut(TestId(i), TestExecutable(i, 8'000))));
  auto stats = store->Stats();
  ASSERT_TRUE(stats);
  EXPECT_LE(stats->hot_bytes, 20'000u);
  EXPECT_EQ(stats->hot_entries, 2u);
  // Older entries come from disk, intact.
  auto hit = store->Get(TestId(0));
  ASSERT_TRUE(hit && hit->has_value());
  EXPECT_FALSE((*hit)->from_memory);
  EXPECT_EQ((*hit)->entry->executable, TestExecutable(0, 8'000));
}

}  // namespace
}  // namespace kiln::cache
