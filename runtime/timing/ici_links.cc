#include "runtime/timing/ici_links.h"

#include <algorithm>

namespace kiln::runtime::timing {

LinkLoads::LinkLoads(const Topology& topology)
    : topology_(topology), bytes_(static_cast<size_t>(topology.chips() * topology.axes() * 2), 0.0) {}

void LinkLoads::Add(const std::vector<int64_t>& at, int axis, int direction, double bytes) {
  const int64_t device = topology_.DeviceAt(at);
  bytes_[static_cast<size_t>((device * topology_.axes() + axis) * 2 + direction)] += bytes;
}

int64_t LinkLoads::RouteOrder(std::vector<int64_t> at, const std::vector<int64_t>& to, const std::vector<int>& order,
                              size_t step, double bytes) {
  if (step == order.size()) return 0;
  const int axis = order[step];
  const int64_t length = topology_.dims[axis];
  const int64_t forward = ((to[axis] - at[axis]) % length + length) % length;
  // Hops going up (+1) or down (-1) the axis; on a wrapped axis either way.
  auto walk = [&](std::vector<int64_t> pos, int direction, int64_t hops, double share) {
    for (int64_t h = 0; h < hops; ++h) {
      Add(pos, axis, direction > 0 ? 0 : 1, share);
      pos[axis] = ((pos[axis] + direction) % length + length) % length;
    }
    return hops + RouteOrder(std::move(pos), to, order, step + 1, share);
  };
  if (forward == 0) return RouteOrder(std::move(at), to, order, step + 1, bytes);
  if (!topology_.wraps[axis]) {
    const int64_t delta = to[axis] - at[axis];
    return walk(std::move(at), delta > 0 ? 1 : -1, delta > 0 ? delta : -delta, bytes);
  }
  const int64_t backward = length - forward;
  if (forward < backward) return walk(std::move(at), 1, forward, bytes);
  if (backward < forward) return walk(std::move(at), -1, backward, bytes);
  const int64_t up = walk(at, 1, forward, bytes / 2);
  return std::max(up, walk(std::move(at), -1, backward, bytes / 2));
}

int64_t LinkLoads::Route(int64_t from, int64_t to, double bytes) {
  const std::vector<int64_t> a = topology_.Coordinates(from);
  const std::vector<int64_t> b = topology_.Coordinates(to);
  std::vector<int> differ;
  for (int axis = 0; axis < topology_.axes(); ++axis) {
    if (a[axis] != b[axis]) differ.push_back(axis);
  }
  if (differ.empty()) return 0;
  int64_t longest = 0;
  const double share = bytes / static_cast<double>(differ.size());
  for (size_t r = 0; r < differ.size(); ++r) {
    std::vector<int> order(differ.begin() + static_cast<std::ptrdiff_t>(r), differ.end());
    order.insert(order.end(), differ.begin(), differ.begin() + static_cast<std::ptrdiff_t>(r));
    longest = std::max(longest, RouteOrder(a, b, order, 0, share));
  }
  return longest;
}

double LinkLoads::Max() const { return bytes_.empty() ? 0 : *std::max_element(bytes_.begin(), bytes_.end()); }

}  // namespace kiln::runtime::timing
