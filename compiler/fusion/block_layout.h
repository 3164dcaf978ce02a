// Arithmetic of VMEM blocks on the chip's (sublane, 128) layout tiles, for
// tiling and its tests: padding, alignment to an iteration space, candidate
// sizes, saturating byte counts.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/shape.h"
#include "runtime/chip/memory_tiles.h"

namespace kiln::fusion {

// The chip's layout tiles (runtime/chip/memory_tiles.h).
using runtime::CeilDiv;
using runtime::kLanes;
using runtime::RoundUp;
using runtime::SublaneTile;

// "18.5 MiB", "512.0 KiB", "96 B", "4.0 EiB".
std::string FormatBytes(int64_t bytes);
// The same for a count beyond int64 ("3.5 ZiB"), e.g. a shape's true size.
std::string FormatByteCount(double bytes);


// Saturate at INT64_MAX instead of overflowing (absurd shapes); operands
// are non-negative.
int64_t SatMul(int64_t a, int64_t b);
int64_t SatAdd(int64_t a, int64_t b);

// The array a value is tiled as: itself, or the first array leaf of a
// tuple; nullptr for tokens.
const hlo::Shape* ArrayShapeOf(const hlo::Shape& shape);

// Dimensions with unbounded dynamic ones (`?`) taken as 1.
std::vector<int64_t> StaticDims(const hlo::Shape& shape);

// Bytes of a block of `dims` of `type`, padded to whole layout tiles (a
// rank-1 block to whole (sublane x 128) tiles, a scalar to one tile).
int64_t PaddedBytes(const std::vector<int64_t>& dims, hlo::PrimitiveType type);

// Bytes of a block of an array of `shape`: `block` has one extent per
// logical dimension and is padded to whole tiles as the shape's layout
// orders its dimensions (those of extent 1 hold no data and are left out);
// a block of another rank (a GEMM view) is padded as written.
int64_t PaddedBlockBytes(const hlo::Shape& shape, const std::vector<int64_t>& block);

// Block-size candidates for one dimension: descending powers of two from
// `largest` down to `smallest`, clipped to the dimension (a block equal to
// the whole dimension needs no alignment).
std::vector<int64_t> Candidates(int64_t dim, int64_t smallest, int64_t largest);

}  // namespace kiln::fusion
