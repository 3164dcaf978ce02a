// TPU memory tiling arithmetic used by the timing model, on the chip's
// tiles (runtime/chip/memory_tiles.h). Every transfer moves whole tiles,
// so a block's traffic is its padded size.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "compiler/hlo/primitive_type.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/memory_tiles.h"

namespace kiln::runtime::timing {

// Bytes one element occupies on the device (sub-byte types are packed).
double DeviceElementBytes(hlo::PrimitiveType type);

// Bytes of a block of `rows` x `lanes` elements repeated `planes` times,
// padded to whole memory tiles of `type`. Saturates instead of overflowing.
double PaddedBlockBytes(hlo::PrimitiveType type, double planes, int64_t rows, int64_t lanes);

// Bytes of `elements` elements of a rank-0 or rank-1 array, which XLA lays
// out flat in whole (sublane x 128) tiles.
double PaddedFlatBytes(hlo::PrimitiveType type, double elements);

// Bytes of a whole array: its two minor dimensions (as its layout orders
// them, leaving out dimensions of extent 1, which hold no data) pad to
// tiles; with fewer than two such dimensions it is flat. Tuples sum their
// elements; tokens are free.
double PaddedArrayBytes(const hlo::Shape& shape);

// Elements the vector unit touches to produce `shape`: the array padded to
// (8,128) tiles of 32-bit lanes. Tuples sum their elements.
double PaddedVectorElements(const hlo::Shape& shape);

// Splits an array's dimensions into (planes, rows, lanes): the two minor
// dimensions and the product of the others (rank 0: 1,1,1; rank 1: 1,1,n).
struct RowsLanes {
  double planes = 1;
  int64_t rows = 1;
  int64_t lanes = 1;
};
RowsLanes SplitMinor(std::span<const int64_t> dims);

}  // namespace kiln::runtime::timing
