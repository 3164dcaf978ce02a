// Sharding propagation: a sharding for every instruction of a computation,
// from the annotations it has and the shardings of its parameters.
//
// Annotated instructions keep their annotation. The others take one from
// their operands (forward: elementwise ops take the most tiled operand's,
// broadcast/transpose/reshape/reduce/slice/pad carry tiles through the
// dimensions they keep, a dot combines its operands' batch and free
// dimensions, get-tuple-element/tuple/call pass shardings through, a
// dynamic-update-slice of an untiled buffer takes its update's tiles, a
// gather from a whole table its indices' batch tiles) or,
// when no operand says anything, from their users (backward, through the same
// ops). What stays undecided is replicated (manual in a computation whose
// parameters are manual and none tiled: a shard_map body); an operand that
// is manual makes its user manual. A while's state is its init's, except
// that elements the init leaves replicated take the tiles the body gives
// them (a scan's stacked residuals), and an init tuple and broadcasts made
// only for the loop take the loop's tiles. A replicated operand says
// nothing forward, so a constant or broadcast feeding a tiled op is tiled
// like it.
//
// Pure function of the computation; thread-safe.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/sharding.h"

namespace kiln::spmd {

using ShardingMap = std::unordered_map<const hlo::Instruction*, hlo::HloSharding>;

// Shardings for every instruction of `computation` run on `num_devices`
// partitions whose parameter i is laid out as parameter_shardings[i]
// (missing entries: the parameter's annotation, else replicated). Fails on an
// annotation that does not parse or fit (the error names the instruction).
Result<ShardingMap> PropagateShardings(const hlo::Computation& computation,
                                       const std::vector<hlo::HloSharding>& parameter_shardings, int64_t num_devices);

}  // namespace kiln::spmd
