// Moving a partitioned value from one sharding to another inside a
// per-partition computation, and the collectives that takes, written as XLA's
// SPMD partitioner writes them (channel_id, use_global_device_ids=true,
// explicit replica_groups).
//
// Resharding gathers (all-gather over the devices that differ only in one
// dimension's tile) the dimensions whose target shard is not inside the
// source shard, then cuts each device's target shard out with a
// dynamic-slice at offsets looked up by partition id. A maximal value is
// first broadcast from its device (masked all-reduce). Uneven splits keep
// XLA's padding: gathered dimensions are sliced back to their size, and a
// shard that runs past the data is padded before it is cut.
//
// Functions write into the builder they are given; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/shape.h"
#include "compiler/hlo/sharding.h"
#include "compiler/spmd/hlo_text_builder.h"

namespace kiln::spmd {

// A value of the computation being written: its instruction's name, its
// shape before partitioning and how it is laid out (its instruction has
// LocalShape(global, sharding)).
struct PartitionedValue {
  std::string name;
  hlo::Shape global;
  hlo::HloSharding sharding;

  hlo::Shape Local() const;
};

// The per-partition shape of a value (tuples element by element). A manual
// value's shape is already per partition.
hlo::Shape LocalShape(const hlo::Shape& global, const hlo::HloSharding& sharding);

// `value` laid out as `target`. Fails (Unimplemented) only between manual
// and non-manual layouts.
Result<PartitionedValue> Reshard(ComputationTextBuilder& b, const PartitionedValue& value,
                                 const hlo::HloSharding& target);

// A rough cost of Reshard in bytes moved per device, to choose between
// layouts (0 when only slicing is needed).
int64_t ReshardBytes(const hlo::Shape& global, const hlo::HloSharding& from, const hlo::HloSharding& to, int64_t num_devices);

// "{{0,1},{2,3}}".
std::string ReplicaGroupsText(const std::vector<std::vector<int64_t>>& groups);

// An all-reduce of array `name` (local shape `shape`) within `groups` with
// the scalar computation `reducer`; returns the result's name.
std::string EmitAllReduce(ComputationTextBuilder& b, const std::string& name, const hlo::Shape& shape,
                          const std::vector<std::vector<int64_t>>& groups, const std::string& reducer);

// `value` with the padding of its uneven shards along `dims` replaced by the
// scalar `fill` (a name in the computation); unchanged when no such padding.
PartitionedValue MaskPadding(ComputationTextBuilder& b, const PartitionedValue& value,
                             const std::vector<int64_t>& dims, const std::string& fill);

// The reducer an all-reduce of partial sums of `type` uses.
std::string SumReducer(ModuleTextBuilder& module, hlo::PrimitiveType type);

}  // namespace kiln::spmd
