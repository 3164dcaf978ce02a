// CacheStore::ReplaceWithTuned: a tuned executable swapped in under the same
// key, only over the bytes the tuner started from.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "cache/cache_store.h"
#include "cache/checksum.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class ReplaceWithTunedTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> OpenStore() {
    CacheStoreOptions options;
    options.path = dir_.File("cache.db");
    auto store = CacheStore::Open(options);
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }

  // The tuned version of an entry: other bytes, plan tuned, `device_seconds`.
  static PutRequest Tuned(const EntryId& id, std::string_view executable, double device_seconds) {
    PutRequest tuned = TestPut(id, executable);
    tuned.plan_kind = PlanKind::kTuned;
    tuned.device_seconds = device_seconds;
    return tuned;
  }

  static EntryMetadata Metadata(CacheStore& store, const EntryId& id) {
    auto metadata = store.GetMetadata(id);
    EXPECT_TRUE(metadata && metadata->has_value());
    return metadata && metadata->has_value() ? **metadata : EntryMetadata{};
  }

  TempDir dir_;
};

TEST_F(ReplaceWithTunedTest, SwapsTunedBytesInUnderTheSameKeyKeepingWhatLeadsToIt) {
  auto store = OpenStore();
  const EntryId id = TestId(1);
  const std::string heuristic = TestExecutable(1, 5000);
  PutRequest put = TestPut(id, heuristic);
  put.device_seconds = 0.5;
  put.components = {{"entry body", Hash128{1, 2}}};
  put.request_hash = Hash128{0, 0xab};
  ASSERT_TRUE(store->Put(put));
  auto before = store->Get(id);  // into the hot set, and pinned while held
  ASSERT_TRUE(before && before->has_value());
  ASSERT_TRUE((*before)->from_memory);
  const uint64_t started_from = (*before)->entry->metadata.checksum;

  const std::string tuned_bytes = TestExecutable(2, 7000);
  Status swapped = store->ReplaceWithTuned(Tuned(id, tuned_bytes, 0.3), started_from);
  ASSERT_TRUE(swapped) << swapped.error().ToString();

  // A reader that held the old entry keeps it whole.
  EXPECT_EQ((*before)->entry->executable, heuristic);
  // New reads get the tuned one, from memory and from disk.
  auto after = store->Get(id);
  ASSERT_TRUE(after && after->has_value());
  EXPECT_EQ((*after)->entry->executable, tuned_bytes);
  EXPECT_EQ((*after)->entry->metadata.plan_kind, PlanKind::kTuned);
  EXPECT_EQ((*after)->entry->metadata.checksum, ExecutableChecksum(tuned_bytes));
  EXPECT_EQ((*after)->entry->metadata.device_seconds, 0.3);
  after->reset();
  before->reset();
  store.reset();
  store = OpenStore();
  auto reopened = store->Get(id);
  ASSERT_TRUE(reopened && reopened->has_value());
  EXPECT_FALSE((*reopened)->from_memory);
  EXPECT_EQ((*reopened)->entry->executable, tuned_bytes);
  EXPECT_EQ((*reopened)->entry->metadata.plan_kind, PlanKind::kTuned);
  // Hits so far survive; the key's components and request mapping stay.
  EXPECT_GE(Metadata(*store, id).hit_count, 2);
  auto components = store->Components(id);
  ASSERT_TRUE(components);
  EXPECT_EQ(*components, put.components);
  auto mapped = store->LookupRequest(id.tenant, Hash128{0, 0xab}, id.chip, id.format_version);
  ASSERT_TRUE(mapped && mapped->has_value());
  EXPECT_EQ(**mapped, id.key);
  // Totals follow the new sizes: one entry, the tuned bytes.
  auto stats = store->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 1);
  EXPECT_EQ(stats->raw_bytes, tuned_bytes.size());
  EXPECT_EQ(stats->stored_bytes, Metadata(*store, id).stored_bytes);
  auto report = store->VerifyAll();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->ok, 1);
}

TEST_F(ReplaceWithTunedTest, StaleExpectedChecksumIsRefusedAndChangesNothing) {
  auto store = OpenStore();
  const EntryId id = TestId(1);
  const std::string first = TestExecutable(1);
  ASSERT_TRUE(store->Put(TestPut(id, first)));
  const uint64_t started_from = Metadata(*store, id).checksum;
  // A recompile lands while the tuner runs.
  const std::string recompiled = TestExecutable(3);
  ASSERT_TRUE(store->Put(TestPut(id, recompiled)));
  const EntryMetadata stored = Metadata(*store, id);

  const std::string tuned_bytes = TestExecutable(2);
  Status swapped = store->ReplaceWithTuned(Tuned(id, tuned_bytes, 0.0001), started_from);
  ASSERT_FALSE(swapped);
  EXPECT_EQ(swapped.error().code, ErrorCode::kAborted);
  EXPECT_EQ(swapped.error().reason(), kEntryChanged);
  const EntryMetadata unchanged = Metadata(*store, id);
  EXPECT_EQ(unchanged.checksum, stored.checksum);
  EXPECT_EQ(unchanged.plan_kind, PlanKind::kHeuristic);
  auto hit = store->Get(id);
  ASSERT_TRUE(hit && hit->has_value());
  EXPECT_EQ((*hit)->entry->executable, recompiled);
}

TEST_F(ReplaceWithTunedTest, NeverOverATunedEntryAsFastNorWithoutAnEntry) {
  auto store = OpenStore();
  const EntryId id = TestId(1);
  const std::string heuristic = TestExecutable(1);
  ASSERT_TRUE(store->Put(TestPut(id, heuristic)));
  const std::string tuned_bytes = TestExecutable(2);
  ASSERT_TRUE(store->ReplaceWithTuned(Tuned(id, tuned_bytes, 0.3), ExecutableChecksum(heuristic)));

  // A second tuning run that started from the tuned entry but is no faster.
  const std::string slower = TestExecutable(4);
  Status refused = store->ReplaceWithTuned(Tuned(id, slower, 0.3), ExecutableChecksum(tuned_bytes));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(refused.error().reason(), kAlreadyTuned);
  EXPECT_EQ(Metadata(*store, id).checksum, ExecutableChecksum(tuned_bytes));
  // A faster one replaces it.
  const std::string faster = TestExecutable(5);
  ASSERT_TRUE(store->ReplaceWithTuned(Tuned(id, faster, 0.2), ExecutableChecksum(tuned_bytes)));
  EXPECT_EQ(Metadata(*store, id).checksum, ExecutableChecksum(faster));

  // Nothing to replace, or not a tuned executable.
  Status missing = store->ReplaceWithTuned(Tuned(TestId(9), faster, 0.1), 0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(store->GetMetadata(TestId(9))->has_value());
  PutRequest heuristic_again = TestPut(id, heuristic);
  Status wrong_kind = store->ReplaceWithTuned(heuristic_again, ExecutableChecksum(faster));
  ASSERT_FALSE(wrong_kind);
  EXPECT_EQ(wrong_kind.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Metadata(*store, id).checksum, ExecutableChecksum(faster));
  auto stats = store->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 1);
}

TEST_F(ReplaceWithTunedTest, AnotherTenantsEntryUnderTheSameKeyIsUntouched) {
  auto store = OpenStore();
  const EntryId alice = TestId(1, "alice");
  const EntryId bob = TestId(1, "bob");
  const std::string heuristic = TestExecutable(1);
  ASSERT_TRUE(store->Put(TestPut(alice, heuristic)));
  ASSERT_TRUE(store->Put(TestPut(bob, heuristic)));
  const std::string tuned_bytes = TestExecutable(2);
  ASSERT_TRUE(store->ReplaceWithTuned(Tuned(alice, tuned_bytes, 0.0005), ExecutableChecksum(heuristic)));
  auto bobs = store->Get(bob);
  ASSERT_TRUE(bobs && bobs->has_value());
  EXPECT_EQ((*bobs)->entry->executable, heuristic);
  EXPECT_EQ((*bobs)->entry->metadata.plan_kind, PlanKind::kHeuristic);
  EXPECT_EQ(Metadata(*store, alice).plan_kind, PlanKind::kTuned);
}

// Readers racing repeated swaps (on a small hot set, so most reads go to
// SQLite) always get one whole executable whose bytes match its metadata,
// and once the swaps are done every read gets the last one.
TEST_F(ReplaceWithTunedTest, ConcurrentReadersSeeOldOrNewBytesNeverTorn) {
  CacheStoreOptions options;
  options.path = dir_.File("cache.db");
  options.hot_set_bytes = 24 * 1024;
  auto opened = CacheStore::Open(options);
  ASSERT_TRUE(opened);
  CacheStore& store = **opened;
  constexpr int kVersions = 40;
  std::vector<std::string> versions;
  for (int v = 0; v < kVersions; ++v) versions.push_back(TestExecutable(100 + v, 6000 + 97 * v));
  const EntryId id = TestId(1);
  ASSERT_TRUE(store.Put(TestPut(id, versions[0])));
  // Other entries compete for the hot set.
  std::vector<std::string> others;
  for (uint64_t n = 2; n < 6; ++n) others.push_back(TestExecutable(n, 6000));
  for (uint64_t n = 2; n < 6; ++n) ASSERT_TRUE(store.Put(TestPut(TestId(n), others[n - 2])));

  std::atomic<bool> done = false;
  std::atomic<int> failures = 0;
  std::atomic<int> reads = 0;
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      for (uint64_t round = 0; !done.load() || round < 50; ++round) {
        if (round % 3 == 0) {
          auto other = store.Get(TestId(2 + (round + t) % 4));
          if (!other || !other->has_value()) ++failures;
          continue;
        }
        auto hit = store.Get(id);
        if (!hit || !hit->has_value()) {
          ++failures;
          continue;
        }
        ++reads;
        const HotEntry& entry = *(*hit)->entry;
        const bool known = std::find(versions.begin(), versions.end(), entry.executable) != versions.end();
        if (!known || ExecutableChecksum(entry.executable) != entry.metadata.checksum) ++failures;
      }
    });
  }
  for (int v = 1; v < kVersions; ++v) {
    Status swapped = store.ReplaceWithTuned(Tuned(id, versions[v], 1.0 - 0.01 * v), ExecutableChecksum(versions[v - 1]));
    ASSERT_TRUE(swapped) << "version " << v << ": " << swapped.error().ToString();
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads.load(), 0);
  for (int i = 0; i < 4; ++i) {
    auto last = store.Get(id);
    ASSERT_TRUE(last && last->has_value());
    EXPECT_EQ((*last)->entry->executable, versions.back());
  }
  auto stats = store.Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 5);
}

}  // namespace
}  // namespace kiln::cache
