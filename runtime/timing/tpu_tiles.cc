#include "runtime/timing/tpu_tiles.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::runtime::timing {

double DeviceElementBytes(hlo::PrimitiveType type) {
  return std::max(hlo::BitWidth(type), 1) / 8.0;
}

double PaddedBlockBytes(hlo::PrimitiveType type, double planes, int64_t rows, int64_t lanes) {
  double padded_rows = static_cast<double>(RoundUp(std::max<int64_t>(rows, 1), SublaneTile(type)));
  double padded_lanes = static_cast<double>(RoundUp(std::max<int64_t>(lanes, 1), kLanes));
  return std::max(planes, 1.0) * padded_rows * padded_lanes * DeviceElementBytes(type);
}

double PaddedFlatBytes(hlo::PrimitiveType type, double elements) {
  double tile = static_cast<double>(SublaneTile(type) * kLanes);
  double tiles = std::max(1.0, std::ceil(elements / tile));
  return tiles * tile * DeviceElementBytes(type);
}

RowsLanes SplitMinor(std::span<const int64_t> dims) {
  RowsLanes out;
  size_t rank = dims.size();
  if (rank >= 1) out.lanes = dims[rank - 1];
  if (rank >= 2) out.rows = dims[rank - 2];
  for (size_t i = 0; i + 2 < rank; ++i) out.planes *= static_cast<double>(dims[i]);
  return out;
}

double PaddedArrayBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) total += PaddedArrayBytes(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  std::vector<int64_t> laid;
  for (int64_t d : PhysicalOrder(shape)) {
    if (shape.dimensions(d) != 1) laid.push_back(shape.dimensions(d));
  }
  if (laid.size() <= 1) return PaddedFlatBytes(shape.element_type(), laid.empty() ? 1.0 : laid[0]);
  RowsLanes split = SplitMinor(laid);
  return PaddedBlockBytes(shape.element_type(), split.planes, split.rows, split.lanes);
}

double PaddedVectorElements(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) total += PaddedVectorElements(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  RowsLanes split = SplitMinor(shape.dimensions());
  return split.planes * static_cast<double>(RoundUp(std::max<int64_t>(split.rows, 1), kVectorSublanes)) *
         static_cast<double>(RoundUp(std::max<int64_t>(split.lanes, 1), kLanes));
}

}  // namespace kiln::runtime::timing
