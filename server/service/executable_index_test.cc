#include "server/service/executable_index.h"

#include <gtest/gtest.h>


namespace kiln::service {
namespace {

cache::EntryId Id(std::string tenant, uint64_t n, std::string chip = "v5e") {
  return cache::EntryId{std::move(tenant), hlo::Hash128{n, n * 3 + 1}, std::move(chip)};
}

std::shared_ptr<const IndexedEntry> Entry(const cache::EntryId& id, uint64_t bytes = 100) {
  EntryView view;
  view.id = id;
  view.plan = "heuristic";
  view.executable = std::make_shared<const std::string>("not kept");
  return MakeIndexedEntry(std::move(view), bytes);
}

TEST(ExecutableIndexTest, ParsesKeysStrictly) {
  const hlo::Hash128 key{0x0123456789abcdefull, 0xfedcba9876543210ull};
  std::optional<hlo::Hash128> parsed = ParseKeyHex(key.Hex());
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, key);
  EXPECT_FALSE(ParseKeyHex(""));
  EXPECT_FALSE(ParseKeyHex(key.Hex().substr(1)));
  EXPECT_FALSE(ParseKeyHex("0123456789ABCDEFfedcba9876543210")) << "uppercase is not a key";
  EXPECT_FALSE(ParseKeyHex("0123456789abcdefgedcba9876543210"));
}

TEST(ExecutableIndexTest, FindsOnlyTheExactTenantsEntry) {
  ExecutableIndex index;
  index.Remember(Entry(Id("shared", 1)));
  EXPECT_EQ(index.Find("alice", Id("alice", 1).key), nullptr) << "the shared entry is not alice's";
  std::shared_ptr<const IndexedEntry> found = index.Find("shared", Id("shared", 1).key);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->view.id.tenant, "shared");
  index.Remember(Entry(Id("alice", 1)));
  found = index.Find("alice", Id("alice", 1).key);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->view.id.tenant, "alice");
  EXPECT_EQ(found->etag, "\"" + Id("alice", 1).key.Hex() + "\"");
  EXPECT_EQ(found->view.executable, nullptr) << "the index never holds bytes";
  EXPECT_EQ(index.Find("bob", Id("bob", 1).key), nullptr) << "no entry of bob's";
  EXPECT_EQ(index.size(), 2u);
}

TEST(ExecutableIndexTest, RememberReplacesForgetDropsAndCapacityStartsOver) {
  ExecutableIndex index(/*capacity=*/3);
  index.Remember(Entry(Id("alice", 1), 100));
  index.Remember(Entry(Id("alice", 1), 200));
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.Find("alice", Id("alice", 1).key)->raw_bytes, 200u);
  index.Forget(Id("alice", 1));
  EXPECT_EQ(index.Find("alice", Id("alice", 1).key), nullptr);
  EXPECT_EQ(index.size(), 0u);
  for (uint64_t n = 1; n <= 3; ++n) index.Remember(Entry(Id("alice", n)));
  EXPECT_EQ(index.size(), 3u);
  index.Remember(Entry(Id("alice", 4)));  // full: starts over with this one
  EXPECT_EQ(index.size(), 1u);
  EXPECT_NE(index.Find("alice", Id("alice", 4).key), nullptr);
  EXPECT_EQ(index.Find("alice", Id("alice", 1).key), nullptr);
}

}  // namespace
}  // namespace kiln::service
