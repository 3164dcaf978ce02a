// StatsHistory: samples taken at construction and every interval, the
// oldest dropped past the capacity.
#include "server/service/stats_history.h"

#include <gtest/gtest.h>

#include <atomic>

namespace kiln::service {
namespace {

TEST(StatsHistoryTest, SamplesAtStartAndEveryIntervalKeepingTheNewest) {
  std::atomic<int64_t> hits{0};
  StatsHistory history([&] { return StatsSample{.unix_ms = 0, .hits = hits++}; }, std::chrono::milliseconds(2), 5);
  ASSERT_GE(history.Samples().size(), 1u);
  EXPECT_EQ(history.Samples().front().hits, 0) << "the first sample is taken at once";
  while (hits.load() < 12) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::vector<StatsSample> samples = history.Samples();
  ASSERT_EQ(samples.size(), 5u);
  for (size_t i = 1; i < samples.size(); ++i) EXPECT_EQ(samples[i].hits, samples[i - 1].hits + 1);
  EXPECT_GE(samples.front().hits, 7);
}

TEST(StatsHistoryTest, StopsPromptlyWithALongInterval) {
  int taken = 0;
  {
    StatsHistory history([&] { return StatsSample{.hits = ++taken}; }, std::chrono::hours(1), 10);
    EXPECT_EQ(history.Samples().size(), 1u);
  }  // joins without waiting an hour
  EXPECT_EQ(taken, 1);
}

}  // namespace
}  // namespace kiln::service
