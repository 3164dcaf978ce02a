// How a dimension's index (kernel_indexing.h) reads from another value:
// through a change of extent (slices, pads, concatenates, windows) or a
// reshape or bitcast that regroups dimensions. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/hlo/shape.h"
#include "runtime/chip/kernel_indexing.h"

namespace kiln::runtime {

// A dimension as seen from another value of a different extent: a single
// plain part is resized, anything else is unknown.
DimIndex Resized(const DimIndex& from, int64_t from_extent, int64_t to_extent);

// Resized through a strided window: `stride` > 1 when `to` is the operand
// of a window of that stride whose result is `from` (each index of `from`
// spans `stride` indices of `to`), < -1 for the other direction (one index
// of `to` per -stride of `from`); as Resized otherwise.
DimIndex Strided(const DimIndex& from, int64_t from_extent, int64_t to_extent, int64_t stride);

// The dimensions of `to_shape` a reshape or bitcast gives from those of
// `from` (indexing `from_shape`): dimensions are grouped where their
// running products meet, and a group's parts (major to minor) are cut
// again for the other side, splitting a part where a cut falls inside it.
// Groups with an unknown dimension, or cuts that do not divide a part, stay
// unknown. `physical`: walk both shapes in memory order rather than
// logical order.
std::vector<DimIndex> Regroup(const ArrayIndex& from, const hlo::Shape& from_shape,
                              const hlo::Shape& to_shape, bool physical);

}  // namespace kiln::runtime
