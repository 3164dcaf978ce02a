// Moving values between their global form and per-partition shards, as a
// partitioned program sees them: split a value by its sharding, assemble a
// value from every partition's shard.
//
// Shards are padded to ShardShape (sharding.h); padding is zero when split
// and ignored when assembled. Assembling checks that the partitions holding
// the same tile (replicas) hold the same bytes, so a partitioned program
// whose replicas disagree fails loudly. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/sharding.h"

namespace kiln::hlo {

// The shard of `global` each of `num_devices` partitions holds under
// `sharding` (tuple literals by a tuple sharding's leaves). A maximal
// value is given whole to every partition; a manual one is refused.
Result<std::vector<Literal>> SplitLiteral(const Literal& global, const HloSharding& sharding, int64_t num_devices);

// The global value of `global_shape` from every partition's shard
// (`shards[d]` is partition d's). Fails when a shard has the wrong shape or
// replicas of a tile differ.
Result<Literal> AssembleLiteral(std::span<const Literal> shards, const Shape& global_shape,
                                const HloSharding& sharding);

}  // namespace kiln::hlo
