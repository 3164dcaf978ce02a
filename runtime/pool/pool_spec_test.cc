#include <gtest/gtest.h>

#include <string>

#include "runtime/pool/fair_queue.h"
#include "runtime/pool/pool_spec.h"

namespace kiln::runtime::pool {
namespace {

TEST(PoolSpecTest, ParsesCountsKindsAndSlices) {
  auto one = ParsePoolSpec("v5e:8");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->chip_count(), 8);
  EXPECT_EQ(one->ToString(), "v5e:8");

  auto mixed = ParsePoolSpec("v5e:4, V6E:2");
  ASSERT_TRUE(mixed) << mixed.error().message;
  EXPECT_EQ(mixed->chip_count(), 6);
  ASSERT_EQ(mixed->groups.size(), 2u);
  EXPECT_EQ(mixed->groups[1].chip->name, "v6e");
  EXPECT_EQ(mixed->ToString(), "v5e:4,v6e:2");

  auto slice = ParsePoolSpec("v5e:2x2");
  ASSERT_TRUE(slice) << slice.error().message;
  EXPECT_EQ(slice->chip_count(), 4);
  EXPECT_EQ(slice->groups[0].topology, (std::vector<int>{2, 2}));
  EXPECT_EQ(slice->ToString(), "v5e:2x2");
}

TEST(PoolSpecTest, RejectsBadSpecsWithAReason) {
  struct Case {
    const char* spec;
    const char* reason;
  };
  for (const Case& c : {Case{"", "empty entry"}, Case{"v9:2", "unknown chip 'v9'"},
                        Case{"v5e", "no ':COUNT'"}, Case{"v5e:0", "not a positive integer"},
                        Case{"v5e:x", "topology"}, Case{"v5e:2x", "topology"},
                        Case{"v5e:-1", "not a positive integer"}, Case{"v5e:4,", "empty entry"},
                        Case{"v5e:100000", "more than 1024 chips"},
                        Case{"v5e:64x64", "more than 1024 chips"}}) {
    auto r = ParsePoolSpec(c.spec);
    ASSERT_FALSE(r) << c.spec;
    EXPECT_NE(r.error().message.find(c.reason), std::string::npos) << c.spec << ": " << r.error().message;
    EXPECT_NE(r.error().message.find("bad pool spec"), std::string::npos);
  }
}

TEST(FairQueueTest, ServesClientsRoundRobin) {
  FairQueue<int> q;
  for (int i = 0; i < 5; ++i) q.Push("a", "", i);
  q.Push("b", "", 100);
  q.Push("b", "", 101);
  std::string order;
  while (auto next = q.Pop("v5e")) order += next->first;
  EXPECT_EQ(order, "ababaaa");
  EXPECT_EQ(q.size(), 0u);
}

TEST(FairQueueTest, SkipsJobsForOtherChipKinds) {
  FairQueue<int> q;
  q.Push("a", "v6e", 1);
  q.Push("a", "", 2);
  q.Push("b", "v6e", 3);
  EXPECT_TRUE(q.HasWorkFor("v5e"));
  auto first = q.Pop("v5e");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->second, 2);
  EXPECT_FALSE(q.HasWorkFor("v5e"));
  EXPECT_FALSE(q.Pop("v5e"));
  EXPECT_EQ(q.Depths(), (std::map<std::string, size_t>{{"a", 1}, {"b", 1}}));
  EXPECT_EQ(q.Pop("v6e")->second, 3);  // b's turn: a was just served
  EXPECT_EQ(q.Pop("v6e")->second, 1);
}

}  // namespace
}  // namespace kiln::runtime::pool
