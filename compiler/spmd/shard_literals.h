// Moving values between their global form and per-partition shards, as a
// partitioned program sees them: split an argument by its parameter's
// sharding, assemble a result from every partition's shard by the root's.
//
// Shards are padded to ShardShape (hlo_sharding.h); padding is zero when
// split and ignored when assembled. Assembling checks that the partitions
// holding the same tile (replicas) hold the same bytes, so a partitioned
// program whose replicas disagree fails loudly. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "compiler/spmd/hlo_sharding.h"
#include "compiler/spmd/sharding_propagation.h"

namespace kiln::spmd {

// The shard of `global` each of `num_devices` partitions holds under
// `sharding` (tuple literals by a tuple sharding's leaves). A maximal
// value is given whole to every partition; a manual one is refused.
Result<std::vector<hlo::Literal>> SplitLiteral(const hlo::Literal& global, const HloSharding& sharding,
                                               int64_t num_devices);

// The global value of `global_shape` from every partition's shard
// (`shards[d]` is partition d's). Fails when a shard has the wrong shape or
// replicas of a tile differ.
Result<hlo::Literal> AssembleLiteral(std::span<const hlo::Literal> shards, const hlo::Shape& global_shape,
                                     const HloSharding& sharding);

// The sharding of each entry parameter of a module before partitioning
// (replicated when unannotated) and of its root: its annotation, else the
// propagated one for result leaves the module header lets keep it
// (allow_spmd_sharding_propagation_to_output, as XLA), else replicated.
Result<std::vector<HloSharding>> EntryParameterShardings(const hlo::Module& module, int64_t num_devices);
Result<HloSharding> EntryRootSharding(const hlo::Module& module, int64_t num_devices);
// Sharding propagation over the entry with those parameter shardings.
Result<ShardingMap> PropagateEntry(const hlo::Module& module, int64_t num_devices);

// Per-partition arguments: result[d][i] is partition d's shard of args[i].
Result<std::vector<std::vector<hlo::Literal>>> SplitArguments(const hlo::Module& module,
                                                              std::span<const hlo::Literal> args,
                                                              int64_t num_devices);

}  // namespace kiln::spmd
