// The SPMD partitioner: a module traced with global shapes and `sharding=`
// annotations becomes ONE program every partition runs on its own shard of
// the data, with the collectives that bring other partitions' data where it
// is needed, as XLA's SPMD partitioner does.
//
// Contract of the partitioned module (for whoever runs it on a slice):
//  - its entry is named "<entry>_spmd" and takes, as parameter i, the shard
//    of argument i laid out by the parameter's annotation (replicated when
//    unannotated); shards of uneven splits are padded (hlo::ShardShape);
//  - its result is the shard of the root's value laid out by the root's
//    annotation (replicated when unannotated);
//  - collectives carry channel_id, use_global_device_ids=true and explicit
//    replica_groups over partition ids 0..num_partitions-1; the header says
//    num_partitions and keeps the module's input_output_alias (each
//    partition may write a donated argument's result over its shard).
// entry_shardings.h splits arguments and assembles results by that contract.
//
// Thread-safe: reads the input module only.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::spmd {

// The per-partition program of `module` for `num_partitions` partitions.
// Fails, naming the instruction, on an annotation that does not parse or fit
// (device count not matching num_partitions, tile rank not matching the
// shape), on a num_partitions header that disagrees, on a module that is
// already partitioned (IsPartitioned), and (Unimplemented) on side-effecting
// ops outside manually sharded regions.
Result<std::unique_ptr<hlo::Module>> PartitionModule(const hlo::Module& module, int64_t num_partitions);

// True for a module that is already one per-partition program: its entry is
// named "..._spmd" (XLA's partitioner output), or it has collectives or
// partition-id outside a shard_map (SPMDFullToShardShape) region. Its
// sharding annotations, if any, are informational.
bool IsPartitioned(const hlo::Module& module);

// True when PartitionModule has work to do: not partitioned, and some
// instruction is annotated with a sharding other than replicated.
bool NeedsPartitioning(const hlo::Module& module);

// How many devices a module runs on: its header's num_partitions times its
// replica_count, else the largest device count its replica_count,
// shardings, replica groups and source-target pairs imply; 1 when nothing
// says.
int64_t ModuleDeviceCount(const hlo::Module& module);

}  // namespace kiln::spmd
