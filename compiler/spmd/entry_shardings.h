// The shardings of a module's entry before partitioning: its parameters'
// and its root's (annotated or propagated), and the per-partition arguments
// they cut (hlo::SplitLiteral, compiler/hlo/sharded_literal.h, does the
// cutting). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/sharded_literal.h"
#include "compiler/hlo/sharding.h"
#include "compiler/spmd/sharding_propagation.h"

namespace kiln::spmd {

// The sharding of each entry parameter of a module before partitioning
// (replicated when unannotated) and of its root: its annotation, else the
// propagated one for result leaves the module header lets keep it
// (allow_spmd_sharding_propagation_to_output, as XLA), else replicated.
Result<std::vector<hlo::HloSharding>> EntryParameterShardings(const hlo::Module& module, int64_t num_devices);
Result<hlo::HloSharding> EntryRootSharding(const hlo::Module& module, int64_t num_devices);
// Sharding propagation over the entry with those parameter shardings.
Result<ShardingMap> PropagateEntry(const hlo::Module& module, int64_t num_devices);

// Per-partition arguments: result[d][i] is partition d's shard of args[i].
Result<std::vector<std::vector<hlo::Literal>>> SplitArguments(const hlo::Module& module,
                                                              std::span<const hlo::Literal> args,
                                                              int64_t num_devices);

}  // namespace kiln::spmd
