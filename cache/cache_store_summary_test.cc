// CacheStore::Summarize and List's orders.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

class CacheStoreSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CacheStoreOptions options;
    options.path = dir_.File("store.db");
    options.dictionary_training_puts = 0;
    int64_t now = 1000;
    options.clock = [now]() mutable { return now += 10; };  // later puts are younger
    auto opened = CacheStore::Open(options);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
    // alice 1: 4096 bytes, 2 s, 3 hits; alice 2: 9000 bytes, 10 s, 1 hit;
    // bob 3: 2048 bytes, 1 s, 5 hits.
    Put(TestId(1), 4096, 2, 3);
    Put(TestId(2), 9000, 10, 1);
    Put(TestId(3, "bob"), 2048, 1, 5);
  }
  void Put(const EntryId& id, size_t size, double seconds, int hits) {
    const std::string bytes = TestExecutable(id.key.high, size);
    ASSERT_TRUE(store_->Put(TestPut(id, bytes, seconds)));
    for (int i = 0; i < hits; ++i) ASSERT_TRUE(store_->Get(id));
  }
  std::vector<uint64_t> Keys(ListOrder order, std::optional<std::string> tenant = std::nullopt) {
    auto listed = store_->List({.tenant = tenant, .order = order});
    EXPECT_TRUE(listed) << listed.error().ToString();
    std::vector<uint64_t> keys;
    for (const EntryMetadata& m : *listed) keys.push_back(m.id.key.high);
    return keys;
  }
  TempDir dir_;
  std::unique_ptr<CacheStore> store_;
};

TEST_F(CacheStoreSummaryTest, SumsOneTenantOrAll) {
  auto alice = store_->Summarize({.tenant = "alice"});
  ASSERT_TRUE(alice) << alice.error().ToString();
  EXPECT_EQ(alice->entries, 2);
  EXPECT_EQ(alice->raw_bytes, 4096u + 9000u);
  EXPECT_EQ(alice->hits, 4);
  EXPECT_DOUBLE_EQ(alice->compile_seconds_saved, 3 * 2.0 + 1 * 10.0);
  auto all = store_->Summarize({});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->entries, 3);
  EXPECT_EQ(all->hits, 9);
  EXPECT_DOUBLE_EQ(all->compile_seconds_saved, 16.0 + 5.0);
  auto nobody = store_->Summarize({.tenant = "carol"});
  ASSERT_TRUE(nobody);
  EXPECT_EQ(nobody->entries, 0);
}

TEST_F(CacheStoreSummaryTest, ListOrders) {
  EXPECT_EQ(Keys(ListOrder::kHits), (std::vector<uint64_t>{3, 1, 2}));
  EXPECT_EQ(Keys(ListOrder::kSaved), (std::vector<uint64_t>{2, 1, 3}));
  EXPECT_EQ(Keys(ListOrder::kAge), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Keys(ListOrder::kHits, "alice"), (std::vector<uint64_t>{1, 2}));
  const std::vector<uint64_t> by_bytes = Keys(ListOrder::kBytes);
  ASSERT_EQ(by_bytes.size(), 3u);
  EXPECT_EQ(by_bytes.front(), 2u);  // 9000 raw bytes stores the most
}

}  // namespace
}  // namespace kiln::cache
