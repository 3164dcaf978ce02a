#include "compiler/buffers/offline_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "compiler/buffers/address_line.h"

namespace kiln::buffers {
namespace {

constexpr int64_t kMiB = 1 << 20;

// Buffers whose live ranges share a kernel never share an address.
void ExpectNoOverlap(const std::vector<LiveRange>& ranges, const Placement& placement) {
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      const bool live_together = ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last;
      if (!live_together) continue;
      const int64_t i_end = placement.offsets[i] + AddressLine::Rounded(ranges[i].bytes);
      const int64_t j_end = placement.offsets[j] + AddressLine::Rounded(ranges[j].bytes);
      EXPECT_TRUE(i_end <= placement.offsets[j] || j_end <= placement.offsets[i])
          << "ranges " << i << " and " << j << " overlap";
    }
  }
}

// The most bytes live at any kernel: no placement can end below it.
int64_t MaxLive(const std::vector<LiveRange>& ranges) {
  int64_t last = 0;
  for (const LiveRange& r : ranges) last = std::max(last, r.last);
  int64_t most = 0;
  for (int64_t k = 0; k <= last; ++k) {
    int64_t live = 0;
    for (const LiveRange& r : ranges) live += r.first <= k && k <= r.last ? AddressLine::Rounded(r.bytes) : 0;
    most = std::max(most, live);
  }
  return most;
}

// A small buffer dies as a larger one is born: a scan in time order leaves
// the freed 1 MiB hole unused and grows the line to 4 MiB; placing the
// 2 MiB buffer first needs only the 3 MiB live at once.
TEST(OfflinePlacementTest, LargestFirstAvoidsTheHoleAScanLeaves) {
  const std::vector<LiveRange> ranges = {{kMiB, 0, 1}, {kMiB, 1, 5}, {2 * kMiB, 2, 5}};
  AddressLine line;
  const int64_t a = line.Allocate(ranges[0].bytes);
  line.Allocate(ranges[1].bytes);
  line.Free(a, ranges[0].bytes);
  line.Allocate(ranges[2].bytes);
  EXPECT_EQ(line.end(), 4 * kMiB);

  std::optional<Placement> placement = PlaceLargestFirst(ranges);
  ASSERT_TRUE(placement.has_value());
  EXPECT_EQ(placement->end, 3 * kMiB);
  EXPECT_EQ(placement->end, MaxLive(ranges));
  ExpectNoOverlap(ranges, *placement);
}

TEST(OfflinePlacementTest, RandomLifetimesNeverOverlapAndStayNearTheLiveBound) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<LiveRange> ranges;
    for (int i = 0; i < 200; ++i) {
      const int64_t first = static_cast<int64_t>(rng() % 100);
      const int64_t length = static_cast<int64_t>(rng() % 20);
      ranges.push_back({static_cast<int64_t>(1 + rng() % (8 * kMiB)), first, first + length});
    }
    std::optional<Placement> placement = PlaceLargestFirst(ranges);
    ASSERT_TRUE(placement.has_value());
    ExpectNoOverlap(ranges, *placement);
    const int64_t bound = MaxLive(ranges);
    EXPECT_GE(placement->end, bound);
    EXPECT_LE(placement->end, bound * 3 / 2) << "trial " << trial;
  }
}

// The definition of the placement, written plainly: for each buffer, largest
// first, gather the placed blocks live with it, sort them by address and take
// the smallest gap that fits (the lowest of equal gaps), else the top.
Placement ReferencePlacement(const std::vector<LiveRange>& ranges) {
  const size_t count = ranges.size();
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int64_t sa = AddressLine::Rounded(ranges[a].bytes), sb = AddressLine::Rounded(ranges[b].bytes);
    if (sa != sb) return sa > sb;
    return ranges[a].first < ranges[b].first;
  });
  Placement placement;
  placement.offsets.assign(count, 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    const int64_t want = AddressLine::Rounded(ranges[i].bytes);
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed) {
      if (ranges[j].first <= ranges[i].last && ranges[i].first <= ranges[j].last) {
        taken.emplace_back(placement.offsets[j], placement.offsets[j] + AddressLine::Rounded(ranges[j].bytes));
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const auto& [offset, end] : taken) {
      if (offset - cursor >= want && offset - cursor < best_gap) {
        best = cursor;
        best_gap = offset - cursor;
      }
      cursor = std::max(cursor, end);
    }
    placement.offsets[i] = best >= 0 ? best : cursor;
    placement.end = std::max(placement.end, placement.offsets[i] + want);
    placed.push_back(i);
  }
  return placement;
}

// Training steps repeat a few buffer sizes many times (one per layer), so
// exact fits and equal addresses are common: the fast scan must place every
// buffer where the plain definition does, or executables would change.
TEST(OfflinePlacementTest, PlacesEveryBufferWhereThePlainDefinitionDoes) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<LiveRange> ranges;
    const int kinds = 1 + trial % 6;  // few distinct sizes: many ties
    for (int i = 0; i < 300; ++i) {
      const int64_t first = static_cast<int64_t>(rng() % 200);
      const int64_t length = static_cast<int64_t>(rng() % (trial % 2 ? 5 : 60));
      const int64_t bytes = trial % 3 == 0 ? static_cast<int64_t>(1 + rng() % (4 * kMiB))
                                           : static_cast<int64_t>(1 + rng() % kinds) * kMiB;
      ranges.push_back({bytes, first, first + length});
    }
    std::optional<Placement> placement = PlaceLargestFirst(ranges);
    ASSERT_TRUE(placement.has_value());
    const Placement reference = ReferencePlacement(ranges);
    EXPECT_EQ(placement->offsets, reference.offsets) << "trial " << trial;
    EXPECT_EQ(placement->end, reference.end) << "trial " << trial;
    ExpectNoOverlap(ranges, *placement);
  }
}

TEST(OfflinePlacementTest, TooManyRangesAreLeftToTheScan) {
  const std::vector<LiveRange> ranges(5, LiveRange{kMiB, 0, 1});
  EXPECT_FALSE(PlaceLargestFirst(ranges, /*max_ranges=*/4).has_value());
  EXPECT_TRUE(PlaceLargestFirst(ranges, /*max_ranges=*/5).has_value());
}

}  // namespace
}  // namespace kiln::buffers
