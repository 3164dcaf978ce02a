// The TPU's memory and vector tiles, the one description the compiler's
// tiling and cost model and the timing simulator share.
//
// Arrays live in HBM and VMEM as (sublane, 128) tiles of their two minor
// dimensions: (8,128) for 32-bit element types, (16,128) for 16-bit and
// (32,128) for 8-bit and narrower, in the order the array's layout puts
// its dimensions. The vector unit computes on (8,128) tiles of 32-bit lanes
// whatever the storage type.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/hlo/primitive_type.h"
#include "compiler/hlo/shape.h"

namespace kiln::runtime {

// Lanes of every tile: the minor dimension pads to a multiple of this.
inline constexpr int64_t kLanes = 128;
// Sublanes of the vector unit's tiles (and of 32-bit memory tiles).
inline constexpr int64_t kVectorSublanes = 8;

// Rows of one memory tile for `type`: 8, 16 or 32.
int64_t SublaneTile(hlo::PrimitiveType type);

// `value` rounded up to a multiple of `multiple` (unchanged when
// `multiple` <= 0).
inline int64_t RoundUp(int64_t value, int64_t multiple) {
  return multiple <= 0 ? value : (value + multiple - 1) / multiple * multiple;
}
// a / b rounded up; 0 when b <= 0.
inline int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

// The logical dimensions of an array major to minor as laid out in memory:
// its layout's minor_to_major reversed (logical order when the layout does
// not name every dimension once). The two last are the tiled ones.
std::vector<int64_t> PhysicalOrder(const hlo::Shape& shape);

// The logical dimensions the memory tiles cover: the last two of
// PhysicalOrder leaving out those of extent 1, which hold no data (fewer
// when the array has fewer such dimensions); second-minor first.
std::vector<int64_t> TiledDimensions(const hlo::Shape& shape);

}  // namespace kiln::runtime
