// Which devices of a slice take part in a collective with a given device.
//
// A slice runs `replica_count` x `partition_count` copies of one program; a
// device's global id is replica * partition_count + partition. How a
// collective's replica_groups name devices follows XLA's group modes:
//   no channel_id                          cross-replica: groups of replica
//                                          ids, same partition
//   channel_id, use_global_device_ids=false cross-replica-and-partition:
//                                          groups of replica ids, every
//                                          partition of each
//   channel_id, use_global_device_ids=true flattened: groups of global ids
//   channel_id, op without the attribute   cross-partition: groups of
//   (all-to-all, collective-broadcast,     partition ids, same replica
//    collective-permute)
// An empty replica_groups means one group of every replica (partition,
// device). These are op semantics: the compiler checks a slice program's
// collectives by them (CheckCollectives), the evaluator runs them and the
// timing simulator prices them. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

// XLA's group modes (above); the timing simulator prices groups by them too.
enum class GroupMode : uint8_t { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// The collective's group mode; an error for use_global_device_ids=true
// without a channel_id.
Result<GroupMode> CollectiveGroupMode(const Instruction& collective);

// One device of a slice.
struct SliceDevice {
  int64_t replica_count = 1;
  int64_t partition_count = 1;
  int64_t replica = 0;
  int64_t partition = 0;

  int64_t device_count() const { return replica_count * partition_count; }
  int64_t id() const { return replica * partition_count + partition; }
};

// The global ids of the group `instr` (a collective other than
// collective-permute) puts `device` in, in group order. Errors (naming the
// instruction): a group naming an id outside the slice or one twice, a
// device in no group or in two, use_global_device_ids without channel_id.
Result<std::vector<int64_t>> CollectiveGroup(const Instruction& instr, const SliceDevice& device);

// For collective-permute: the devices its source_target_pairs index (the
// partitions of the device's replica with channel_id, else the replicas of
// its partition), in index order, and the index of the device whose value
// this device receives (-1 when none). Errors: a pair naming an index
// outside the slice, a target with two sources.
struct PermuteRoute {
  std::vector<int64_t> domain;
  int64_t source_index = -1;
};
Result<PermuteRoute> CollectivePermuteRoute(const Instruction& instr, const SliceDevice& device);

// Every collective of `module` (in any computation) checked on every device
// of a slice of `replica_count` x `partition_count`, as the evaluator would
// run it: the first that names a device outside the slice, names one twice,
// leaves one out, gives a target two sources, or asks for global ids
// without a channel is the error (invalid_argument, reason
// invalid_collective, naming the instruction and its computation).
Status CheckCollectives(const Module& module, int64_t replica_count, int64_t partition_count);

}  // namespace kiln::hlo
