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

// Resized through a window (kernel_edges.h: WindowReach): `to_operand`
// when `to` is the window's operand and `from` its result (each index of
// `from` spans `stride` indices of `to`, a block `halo` more), otherwise
// the other way (one index of `to` per `stride` of `from`); as Resized for
// a window of stride 1 and no overlap.
DimIndex ThroughWindow(const DimIndex& from, int64_t from_extent, int64_t to_extent, WindowReach reach,
                       bool to_operand);

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
