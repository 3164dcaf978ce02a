#include "compiler/fusion/block_layout.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>

namespace kiln::fusion {

using hlo::PrimitiveType;
using hlo::Shape;

// Saturating multiply for byte counts of absurd shapes.
int64_t SatMul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) {
    return std::numeric_limits<int64_t>::max();
  }
  return a * b;
}
int64_t SatAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

// The array a value is tiled as: itself, or the first array leaf of a tuple.
const Shape* ArrayShapeOf(const Shape& shape) {
  if (shape.IsArray()) return &shape;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (const Shape* leaf = ArrayShapeOf(element)) return leaf;
    }
  }
  return nullptr;
}

// Dimensions with unbounded dynamic ones (`?`) taken as 1.
std::vector<int64_t> StaticDims(const Shape& shape) {
  std::vector<int64_t> dims = shape.dimensions();
  for (int64_t& d : dims) d = std::max<int64_t>(d, d == hlo::kUnboundedDim ? 1 : 0);
  return dims;
}

// Bytes of a block of `dims` of `type`, padded to whole layout tiles.
int64_t PaddedBytes(const std::vector<int64_t>& dims, PrimitiveType type) {
  int64_t sub = SublaneTile(type);
  int64_t bytes = std::max(hlo::HostByteWidth(type), 1);
  int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) return SatMul(sub * kLanes, bytes);
  if (rank == 1) return SatMul(RoundUp(std::max<int64_t>(dims[0], 1), sub * kLanes), bytes);
  int64_t elements = RoundUp(std::max<int64_t>(dims[rank - 1], 1), kLanes);
  elements = SatMul(elements, RoundUp(std::max<int64_t>(dims[rank - 2], 1), sub));
  for (int64_t i = 0; i + 2 < rank; ++i) elements = SatMul(elements, std::max<int64_t>(dims[i], 1));
  return SatMul(elements, bytes);
}

int64_t PaddedBlockBytes(const Shape& shape, const std::vector<int64_t>& block) {
  if (!shape.IsArray() || static_cast<int64_t>(block.size()) != shape.rank()) {
    return PaddedBytes(block, shape.element_type());
  }
  std::vector<int64_t> laid;
  for (int64_t d : runtime::PhysicalOrder(shape)) {
    if (shape.dimensions(d) != 1) laid.push_back(block[d]);
  }
  return PaddedBytes(laid, shape.element_type());
}

// Tile-size candidates for one dimension: descending powers of two from
// `largest` down to `smallest`, clipped to the dimension (a block equal to
// the whole dimension needs no alignment).
std::vector<int64_t> Candidates(int64_t dim, int64_t smallest, int64_t largest) {
  std::vector<int64_t> out;
  dim = std::max<int64_t>(dim, 1);
  for (int64_t c = largest; c >= smallest; c /= 2) {
    int64_t b = std::min(c, dim);
    if (out.empty() || out.back() != b) out.push_back(b);
  }
  if (out.empty()) out.push_back(std::min(smallest, dim));
  return out;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  return FormatByteCount(static_cast<double>(bytes));
}

std::string FormatByteCount(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return buffer;
}

}  // namespace kiln::fusion
