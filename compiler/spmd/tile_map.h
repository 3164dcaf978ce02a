// A sharding seen per device: how many tiles each dimension is cut into and
// which tile every device holds. Propagation and the partitioner reason in
// this form (deriving an operand's layout from a result's, checking that two
// operands line up, grouping devices for a collective) and turn the result
// back into an hlo::HloSharding with ToSharding.
//
// Plain values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/shape.h"
#include "compiler/hlo/sharding.h"

namespace kiln::spmd {

struct TileMap {
  std::vector<int64_t> counts;              // tiles per dimension
  std::vector<std::vector<int64_t>> index;  // index[device][dim]

  int64_t rank() const { return static_cast<int64_t>(counts.size()); }
  int64_t devices() const { return static_cast<int64_t>(index.size()); }
  // Every dimension in one tile.
  bool IsReplicated() const;
};

// The tile map of a replicated or tiled sharding for a rank-`rank` value
// (maximal and manual shardings map like replicated).
TileMap TileMapOf(const hlo::HloSharding& sharding, int64_t rank, int64_t num_devices);
// The sharding of a tile map; fails when tiles are held by unequal numbers
// of devices (no sharding can say that).
Result<hlo::HloSharding> ToSharding(const TileMap& map);

// A rank-`from_dim.size()` map whose dimension j takes the tiles of
// `source`'s dimension from_dim[j] (-1: not tiled).
TileMap Remap(const TileMap& source, const std::vector<int64_t>& from_dim);

// Devices grouped so that within a group only the `vary` dimensions' tile
// indices differ, each combination exactly once (replicas of a tile go to
// different groups), members ordered by their indices on `vary`
// (lexicographically). Fails when the map cannot be grouped that way.
Result<std::vector<std::vector<int64_t>>> VaryingGroups(const TileMap& map, const std::vector<int64_t>& vary);

// For a reshape from `from` to `to` (arrays of equal element count) of a
// value tiled `from_counts`: for each `to` dimension, the `from` dimension
// whose tiles it keeps (-1: none), such that every device's shard reshapes
// to its shard of the result. nullopt when the tiling does not survive the
// reshape (a tiled dimension split across a boundary, an uneven split).
std::optional<std::vector<int64_t>> ReshapeTileSource(const hlo::Shape& from, const hlo::Shape& to,
                                                      const std::vector<int64_t>& from_counts);

}  // namespace kiln::spmd
