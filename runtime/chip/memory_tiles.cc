#include "runtime/chip/memory_tiles.h"

#include <numeric>

namespace kiln::runtime {

int64_t SublaneTile(hlo::PrimitiveType type) {
  int bits = hlo::BitWidth(type);
  if (bits >= 32) return kVectorSublanes;
  if (bits == 16) return 16;
  return 32;
}

std::vector<int64_t> PhysicalOrder(const hlo::Shape& shape) {
  const int64_t rank = shape.IsArray() ? shape.rank() : 0;
  std::vector<int64_t> order(rank);
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major;
  if (static_cast<int64_t>(m2m.size()) == rank) {
    std::vector<bool> seen(rank, false);
    bool valid = true;
    for (int64_t i = 0; i < rank && valid; ++i) {
      const int64_t d = m2m[rank - 1 - i];
      valid = d >= 0 && d < rank && !seen[d];
      if (valid) seen[d] = true;
      order[i] = d;
    }
    if (valid) return order;
  }
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<int64_t> TiledDimensions(const hlo::Shape& shape) {
  std::vector<int64_t> tiled;
  const std::vector<int64_t> order = PhysicalOrder(shape);
  for (auto it = order.rbegin(); it != order.rend() && tiled.size() < 2; ++it) {
    if (shape.dimensions(*it) != 1) tiled.insert(tiled.begin(), *it);
  }
  return tiled;
}

}  // namespace kiln::runtime
