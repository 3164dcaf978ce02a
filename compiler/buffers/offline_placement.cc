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

  // The placed blocks, sorted by (offset, end): the blocks live together
  // with the next buffer are then met in address order, without a sort per
  // buffer. Kept flat for a fast scan.
  struct Placed {
    int64_t offset, end, first, last;
  };
  std::vector<Placed> placed;
  placed.reserve(count);
  Placement placement;
  placement.offsets.assign(count, 0);
  for (int64_t i : by_size) {
    const int64_t first = ranges[i].first, last = ranges[i].last, want = size[i];
    // The smallest gap that fits (ties: the lowest); else above them all.
    // A gap of exactly `want` cannot be beaten, and later ones lie higher.
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max(), cursor = 0;
    for (const Placed& p : placed) {
      if (p.first > last || first > p.last) continue;
      const int64_t gap = p.offset - cursor;
      if (gap >= want && gap < best_gap) {
        best = cursor;
        best_gap = gap;
        if (gap == want) break;
      }
      cursor = std::max(cursor, p.end);
    }
    const int64_t offset = best >= 0 ? best : cursor;
    const Placed block{offset, SaturatingEnd(offset, want), first, last};
    placement.offsets[i] = offset;
    placement.end = std::max(placement.end, block.end);
    auto at = std::lower_bound(placed.begin(), placed.end(), block, [](const Placed& a, const Placed& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.end < b.end;
    });
    placed.insert(at, block);
  }
  return placement;
}

}  // namespace kiln::buffers
