#include "compiler/autotune/schedule_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace kiln::autotune::internal {
namespace {

// Kernel i defines buffer i. h1 -> h2 is the activations' chain (10 us
// each), g (5 us) the gradient its all-reduce (8 us on the links) sends;
// written in that order, the all-reduce starts only after the chain.
ScheduleProblem GradientWrittenLast(double h1_bytes = 100) {
  ScheduleProblem p;
  p.kernels = {
      {10, false, {}, {}, {0}},      // h1
      {10, false, {0}, {0}, {1}},    // h2 reads h1
      {5, false, {}, {}, {2}},       // g
      {8, true, {2}, {2}, {3}},      // ar reads g
  };
  p.bytes = {h1_bytes, 1, 10, 10};
  p.returned = {0, 1, 0, 1};
  return p;
}

TEST(ScheduleSearchTest, TheCollectivesFeederRunsFirstAndItsTransferHides) {
  const ScheduleProblem problem = GradientWrittenLast();
  EXPECT_DOUBLE_EQ(ListScheduledUs(problem, {0, 1, 2, 3}), 33);  // 10 + 10 + 5, then 8 on the links
  EXPECT_DOUBLE_EQ(ListScheduledUs(problem, {2, 3, 0, 1}), 25);  // the transfer under h1 and h2

  std::vector<ScheduleOrder> orders = LatencyHidingOrders(problem);
  ASSERT_FALSE(orders.empty());
  for (size_t i = 1; i < orders.size(); ++i) EXPECT_LE(orders[i - 1].simulated_us, orders[i].simulated_us);
  const ScheduleOrder& best = orders.front();
  ASSERT_EQ(best.order.size(), 4u);
  EXPECT_EQ(best.order.front(), 2) << best.name;
  EXPECT_DOUBLE_EQ(best.simulated_us, 25);
  EXPECT_DOUBLE_EQ(ListScheduledUs(problem, best.order), 25);
  // Valid: h2 after h1, ar after g.
  auto at = [&](int64_t k) { return std::find(best.order.begin(), best.order.end(), k) - best.order.begin(); };
  EXPECT_LT(at(0), at(1));
  EXPECT_LT(at(2), at(3));
  for (const ScheduleOrder& o : orders) EXPECT_NE(o.order, (std::vector<int64_t>{0, 1, 2, 3})) << o.name;
}

TEST(ScheduleSearchTest, LiveBytesFollowReadersAndReturnedValues) {
  const ScheduleProblem problem = GradientWrittenLast();
  // h1's 100 bytes live until h2 reads them (with h2's 1); g's 10 until ar.
  EXPECT_DOUBLE_EQ(PeakLiveBytes(problem, {0, 1, 2, 3}), 100 + 1);  // h1 and h2 while h2 runs
  EXPECT_DOUBLE_EQ(PeakLiveBytes(problem, {2, 3, 0, 1}), 10 + 100 + 1);         // ar returned, h1, h2
}

TEST(ScheduleSearchTest, NoCollectiveNoOrders) {
  ScheduleProblem problem = GradientWrittenLast();
  problem.kernels[3].on_links = false;
  EXPECT_TRUE(LatencyHidingOrders(problem).empty());
}

}  // namespace
}  // namespace kiln::autotune::internal
