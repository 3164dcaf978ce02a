// Offline placement: buffers whose live ranges are all known up front are
// placed on one address line largest first, each in the best-fitting gap
// left by the already placed buffers it is live together with (XLA's
// global decreasing-size best-fit heap). Placing the big buffers first
// leaves far less fragmentation than a scan in program order when large
// and small lifetimes interleave, as in training steps.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::buffers {

// A buffer live from kernel `first` to kernel `last` (inclusive): two
// buffers need distinct addresses when their ranges share a kernel.
struct LiveRange {
  int64_t bytes = 0;  // > 0
  int64_t first = 0;
  int64_t last = 0;
};

struct Placement {
  std::vector<int64_t> offsets;  // one per range, in the order given
  int64_t end = 0;               // every block lies below it
};

// Sizes are rounded up to AddressLine::kAlignment. Quadratic in the number
// of ranges: nullopt above `max_ranges`, for the caller to fall back on an
// online scan.
std::optional<Placement> PlaceLargestFirst(const std::vector<LiveRange>& ranges, int64_t max_ranges = 20000);

}  // namespace kiln::buffers
