// Who takes part in a collective on a slice: XLA's group modes resolved to
// the slice's device ids.
//
// XLA forms groups from channel_id and use_global_device_ids
// (collective_ops_utils' GetCollectiveOpGroupMode): no channel_id groups
// replicas (cross-replica); a channel_id on all-to-all / collective-permute
// groups partitions (cross-partition); on all-reduce / all-gather /
// reduce-scatter it groups replicas across every partition
// (cross-replica-and-partition) unless use_global_device_ids=true, when the
// groups list flattened ids replica * num_partitions + partition. An empty
// `replica_groups={}` is one group of every replica (or partition, or
// device). Device ids follow XLA's default placer: partition *
// replica_count + replica.
//
// Pure functions; thread-safe. Errors name the instruction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/collective_groups.h"  // GroupMode, CollectiveGroupMode

namespace kiln::runtime::timing {

using hlo::CollectiveGroupMode;
using hlo::GroupMode;

// How the program's replicas and partitions fill the slice's chips. Both 0
// (the default): the slice runs one program per chip, as replicas for a
// collective without a channel_id and as partitions otherwise.
struct SliceAssignment {
  int64_t replica_count = 0;
  int64_t num_partitions = 0;
};

// The device groups of `collective` on a slice of `chips` chips, each in the
// order its replica group lists it. Errors: an id outside the replicas,
// partitions or devices the slice runs, or an assignment whose replicas x
// partitions is not the chip count.
Result<std::vector<std::vector<int64_t>>> ParticipantGroups(const hlo::Instruction& collective, int64_t chips,
                                                            const SliceAssignment& assignment = {});

// collective-permute's (source, target) device pairs, repeated for every
// replica (cross-partition) or partition (cross-replica).
Result<std::vector<std::pair<int64_t, int64_t>>> PermutePairs(const hlo::Instruction& permute, int64_t chips,
                                                              const SliceAssignment& assignment = {});

}  // namespace kiln::runtime::timing
