#include "cache/eviction_policy.h"

#include <gtest/gtest.h>

namespace kiln::cache {
namespace {

constexpr int64_t kNow = 1'000'000'000'000;
constexpr int64_t kHour = 3'600'000;

EvictionCandidate Candidate(int64_t row, uint64_t bytes, double seconds, int64_t idle_ms, int64_t hits = 0) {
  return {.row_id = row, .stored_bytes = bytes, .compile_seconds = seconds, .hit_count = hits,
          .last_used_ms = kNow - idle_ms, .pinned = false};
}

TEST(EvictionPolicyTest, PrefersKeepingCompileSecondsPerByte) {
  EvictionPolicy policy;
  // Same recency: the big cheap entry scores below the small costly one.
  EXPECT_LT(RetentionScore(Candidate(1, 1'000'000, 1, 0), kNow, policy),
            RetentionScore(Candidate(2, 10'000, 120, 0), kNow, policy));
  // Hits raise the score.
  EXPECT_LT(RetentionScore(Candidate(1, 1000, 1, 0, 0), kNow, policy),
            RetentionScore(Candidate(1, 1000, 1, 0, 5), kNow, policy));
}

TEST(EvictionPolicyTest, RecencyDecaysTheScore) {
  EvictionPolicy policy{.half_life_seconds = 3600};
  const double fresh = RetentionScore(Candidate(1, 1000, 10, 0), kNow, policy);
  const double hour = RetentionScore(Candidate(1, 1000, 10, kHour), kNow, policy);
  EXPECT_NEAR(hour / fresh, 0.5, 1e-9);
}

TEST(EvictionPolicyTest, IsNotPlainLru) {
  EvictionPolicy policy{.half_life_seconds = 24 * 3600.0, .low_water_fraction = 1.0};
  // Entry 1 was used a minute ago but compiled in 0.1 s and is big; entry 2
  // was idle for an hour but took 5 minutes to compile. LRU would evict 2.
  std::vector<EvictionCandidate> candidates = {Candidate(1, 50'000, 0.1, 60'000),
                                               Candidate(2, 50'000, 300, kHour)};
  auto victims = ChooseVictims(candidates, 100'000, 60'000, kNow, policy);
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(victims[0], 1);
}

TEST(EvictionPolicyTest, EvictsToLowWaterAndSkipsPinned) {
  EvictionPolicy policy{.half_life_seconds = 3600, .low_water_fraction = 0.5};
  std::vector<EvictionCandidate> candidates;
  for (int64_t i = 0; i < 10; ++i) candidates.push_back(Candidate(i, 100, 1, (10 - i) * kHour));
  candidates[0].pinned = true;  // the oldest, would go first
  auto victims = ChooseVictims(candidates, 1000, 800, kNow, policy);
  // Down to 400 bytes: six entries go, oldest unpinned first.
  ASSERT_EQ(victims.size(), 6u);
  for (size_t i = 0; i < victims.size(); ++i) EXPECT_EQ(victims[i], static_cast<int64_t>(i + 1));
  EXPECT_TRUE(ChooseVictims(candidates, 800, 800, kNow, policy).empty());
}

TEST(EvictionPolicyTest, AllPinnedEvictsNothing) {
  EvictionPolicy policy;
  std::vector<EvictionCandidate> candidates = {Candidate(1, 100, 1, 0)};
  candidates[0].pinned = true;
  EXPECT_TRUE(ChooseVictims(candidates, 100, 10, kNow, policy).empty());
}

}  // namespace
}  // namespace kiln::cache
