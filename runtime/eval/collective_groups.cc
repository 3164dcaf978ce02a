#include "runtime/eval/collective_groups.h"

#include <algorithm>
#include <string>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/instruction_error.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// all-reduce, all-gather and reduce-scatter carry use_global_device_ids
// (false when absent); the other collectives have no such attribute.
bool HasGlobalIdsAttribute(Opcode op) {
  return op == Opcode::kAllReduce || op == Opcode::kAllReduceStart || op == Opcode::kAllGather ||
         op == Opcode::kAllGatherStart || op == Opcode::kReduceScatter;
}

// How many ids the groups of `mode` range over.
int64_t IdCount(GroupMode mode, const SliceDevice& device) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition: return device.replica_count;
    case GroupMode::kCrossPartition: return device.partition_count;
    case GroupMode::kFlattenedId: return device.device_count();
  }
  return 0;
}

// This device's id in the numbering of `mode`.
int64_t OwnId(GroupMode mode, const SliceDevice& device) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition: return device.replica;
    case GroupMode::kCrossPartition: return device.partition;
    case GroupMode::kFlattenedId: return device.id();
  }
  return 0;
}

std::string SliceText(const SliceDevice& device) {
  return std::to_string(device.replica_count) + " replica(s) x " + std::to_string(device.partition_count) +
         " partition(s)";
}

}  // namespace

Result<GroupMode> CollectiveGroupMode(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> channel, hlo::GetChannelId(instr));
  KILN_ASSIGN_OR_RETURN(bool global_ids, hlo::GetBoolAttributeOr(instr, "use_global_device_ids", false));
  if (!channel) {
    if (global_ids) return std::unexpected(InstrError(instr, "use_global_device_ids=true needs a channel_id"));
    return GroupMode::kCrossReplica;
  }
  if (!HasGlobalIdsAttribute(instr.opcode())) return GroupMode::kCrossPartition;
  return global_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

Result<std::vector<int64_t>> CollectiveGroup(const Instruction& instr, const SliceDevice& device) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, CollectiveGroupMode(instr));
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, hlo::GetReplicaGroups(instr));
  const int64_t count = IdCount(mode, device);
  const int64_t own = OwnId(mode, device);
  if (groups.empty()) {
    groups.emplace_back(count);
    for (int64_t i = 0; i < count; ++i) groups[0][i] = i;
  }
  std::vector<bool> seen(count, false);
  const std::vector<int64_t>* mine = nullptr;
  for (const std::vector<int64_t>& group : groups) {
    for (int64_t id : group) {
      if (id < 0 || id >= count) {
        return std::unexpected(InstrError(instr, "replica_groups names id " + std::to_string(id) +
                                                     ", outside the slice of " + SliceText(device)));
      }
      if (seen[id]) {
        return std::unexpected(InstrError(instr, "replica_groups names id " + std::to_string(id) + " twice"));
      }
      seen[id] = true;
      if (id == own) mine = &group;
    }
  }
  if (mine == nullptr) {
    return std::unexpected(InstrError(instr, "replica_groups leave out id " + std::to_string(own) +
                                                 " of the slice of " + SliceText(device)));
  }
  std::vector<int64_t> out;
  switch (mode) {
    case GroupMode::kCrossReplica:
      for (int64_t r : *mine) out.push_back(r * device.partition_count + device.partition);
      break;
    case GroupMode::kCrossReplicaAndPartition:
      for (int64_t r : *mine) {
        for (int64_t p = 0; p < device.partition_count; ++p) out.push_back(r * device.partition_count + p);
      }
      break;
    case GroupMode::kCrossPartition:
      for (int64_t p : *mine) out.push_back(device.replica * device.partition_count + p);
      break;
    case GroupMode::kFlattenedId:
      out = *mine;
      break;
  }
  return out;
}

Result<PermuteRoute> CollectivePermuteRoute(const Instruction& instr, const SliceDevice& device) {
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> channel, hlo::GetChannelId(instr));
  KILN_ASSIGN_OR_RETURN(auto pairs, hlo::GetSourceTargetPairs(instr));
  const bool across_partitions = channel.has_value();
  const int64_t count = across_partitions ? device.partition_count : device.replica_count;
  const int64_t own = across_partitions ? device.partition : device.replica;
  PermuteRoute route;
  for (int64_t i = 0; i < count; ++i) {
    route.domain.push_back(across_partitions ? device.replica * device.partition_count + i
                                             : i * device.partition_count + device.partition);
  }
  std::vector<bool> has_source(count, false);
  for (auto [source, target] : pairs) {
    if (source < 0 || source >= count || target < 0 || target >= count) {
      return std::unexpected(InstrError(
          instr, "source_target_pairs {" + std::to_string(source) + "," + std::to_string(target) +
                     "} is outside the slice's " + std::to_string(count) +
                     (across_partitions ? " partition(s)" : " replica(s)")));
    }
    if (has_source[target]) {
      return std::unexpected(InstrError(instr, "source_target_pairs give target " + std::to_string(target) +
                                                   " two sources"));
    }
    has_source[target] = true;
    if (target == own) route.source_index = source;
  }
  return route;
}

}  // namespace kiln::runtime
