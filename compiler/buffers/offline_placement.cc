#include "compiler/buffers/offline_placement.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "compiler/buffers/address_line.h"

namespace kiln::buffers {

namespace {

int64_t SaturatingEnd(int64_t offset, int64_t size) {
  return offset > std::numeric_limits<int64_t>::max() - size ? std::numeric_limits<int64_t>::max() : offset + size;
}

}  // namespace

std::optional<Placement> PlaceLargestFirst(const std::vector<LiveRange>& ranges, int64_t max_ranges) {
  const int64_t count = static_cast<int64_t>(ranges.size());
  if (count > max_ranges) return std::nullopt;
  std::vector<int64_t> size(count);
  for (int64_t i = 0; i < count; ++i) size[i] = AddressLine::Rounded(ranges[i].bytes);
  std::vector<int64_t> by_size(count);
  std::iota(by_size.begin(), by_size.end(), 0);
  // Largest first; ties: the earlier-starting, then the given order.
  std::stable_sort(by_size.begin(), by_size.end(), [&](int64_t a, int64_t b) {
    if (size[a] != size[b]) return size[a] > size[b];
    return ranges[a].first < ranges[b].first;
  });

  Placement placement;
  placement.offsets.assign(count, 0);
  std::vector<int64_t> placed;
  placed.reserve(count);
  std::vector<std::pair<int64_t, int64_t>> taken;  // (offset, end) of overlapping placed blocks
  for (int64_t i : by_size) {
    taken.clear();
    for (int64_t j : placed) {
      if (ranges[j].first <= ranges[i].last && ranges[i].first <= ranges[j].last) {
        taken.emplace_back(placement.offsets[j], SaturatingEnd(placement.offsets[j], size[j]));
      }
    }
    std::sort(taken.begin(), taken.end());
    // The smallest gap that fits (ties: the lowest); else above them all.
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max(), cursor = 0;
    for (const auto& [offset, end] : taken) {
      const int64_t gap = offset - cursor;
      if (gap >= size[i] && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, end);
    }
    const int64_t offset = best >= 0 ? best : cursor;
    placement.offsets[i] = offset;
    placement.end = std::max(placement.end, SaturatingEnd(offset, size[i]));
    placed.push_back(i);
  }
  return placement;
}

}  // namespace kiln::buffers
