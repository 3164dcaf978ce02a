#include "cache/hot_set.h"

#include <gtest/gtest.h>

#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TestId;

std::shared_ptr<const HotEntry> Entry(uint64_t n, size_t bytes, std::string tenant = "alice") {
  auto entry = std::make_shared<HotEntry>();
  entry->metadata.id = TestId(n, std::move(tenant));
  entry->executable.assign(bytes, 'x');
  return entry;
}

// A reader's copy fetched before a writer replaced or removed the entry is
// not put back over the writer's.
TEST(HotSetTest, ReadersCopyFromBeforeAWriteIsNotInserted) {
  HotSet hot(1000);
  const uint64_t before_replace = hot.generation();
  hot.Insert(Entry(1, 200));  // the writer's new bytes
  EXPECT_FALSE(hot.InsertIfUnchanged(Entry(1, 100), before_replace));
  EXPECT_EQ(hot.Find(TestId(1))->executable.size(), 200u);

  const uint64_t before_erase = hot.generation();
  hot.Erase(TestId(1));
  EXPECT_FALSE(hot.InsertIfUnchanged(Entry(1, 100), before_erase));
  EXPECT_EQ(hot.Find(TestId(1)), nullptr);

  // With no write in between, and reader inserts do not hold each other off.
  const uint64_t quiet = hot.generation();
  EXPECT_TRUE(hot.InsertIfUnchanged(Entry(1, 100), quiet));
  EXPECT_TRUE(hot.InsertIfUnchanged(Entry(2, 100), quiet));
  EXPECT_NE(hot.Find(TestId(2)), nullptr);
}

TEST(HotSetTest, StaysWithinCapacityDroppingLeastRecentlyUsed) {
  HotSet hot(300);
  hot.Insert(Entry(1, 100));
  hot.Insert(Entry(2, 100));
  hot.Insert(Entry(3, 100));
  EXPECT_EQ(hot.bytes(), 300u);
  ASSERT_NE(hot.Find(TestId(1)), nullptr);  // 1 is now most recent
  hot.Insert(Entry(4, 100));
  EXPECT_EQ(hot.bytes(), 300u);
  EXPECT_EQ(hot.size(), 3u);
  EXPECT_EQ(hot.Find(TestId(2)), nullptr);
  EXPECT_NE(hot.Find(TestId(1)), nullptr);
  EXPECT_NE(hot.Find(TestId(4)), nullptr);
}

TEST(HotSetTest, KeysIncludeTenantChipAndVersion) {
  HotSet hot(1000);
  hot.Insert(Entry(1, 10, "alice"));
  EXPECT_EQ(hot.Find(TestId(1, "bob")), nullptr);
  EXPECT_EQ(hot.Find(TestId(1, "alice", "v4")), nullptr);
  EntryId other_version = TestId(1);
  other_version.format_version = kCompilerFormatVersion + 1;
  EXPECT_EQ(hot.Find(other_version), nullptr);
  EXPECT_NE(hot.Find(TestId(1)), nullptr);
}

TEST(HotSetTest, ReplacesAndSkipsOversizedEntries) {
  HotSet hot(100);
  hot.Insert(Entry(1, 40));
  hot.Insert(Entry(1, 60));
  EXPECT_EQ(hot.bytes(), 60u);
  EXPECT_EQ(hot.size(), 1u);
  hot.Insert(Entry(2, 101));
  EXPECT_EQ(hot.Find(TestId(2)), nullptr);
  EXPECT_EQ(hot.bytes(), 60u);
  hot.Erase(TestId(1));
  EXPECT_EQ(hot.bytes(), 0u);
}

TEST(HotSetTest, ValuesOutliveTheirSlot) {
  HotSet hot(100);
  hot.Insert(Entry(1, 100));
  auto kept = hot.Find(TestId(1));
  hot.Insert(Entry(2, 100));
  EXPECT_EQ(hot.Find(TestId(1)), nullptr);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->executable.size(), 100u);
}

}  // namespace
}  // namespace kiln::cache
