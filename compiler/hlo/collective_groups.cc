#include "compiler/hlo/collective_groups.h"

#include <algorithm>
#include <string>

#include "compiler/hlo/op_attributes.h"

namespace kiln::hlo {
namespace {

Error CollectiveError(const Instruction& instr, const std::string& what) {
  return InvalidArgumentError("instruction %" + std::string(instr.name()) + ": " + what).WithReason("invalid_collective");
}

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

// The groups of `instr` (its own, or one of every id when it lists none),
// each id checked to lie in the slice and appear at most once.
Result<std::vector<std::vector<int64_t>>> CheckedGroups(const Instruction& instr, GroupMode mode,
                                                        const SliceDevice& device) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, GetReplicaGroups(instr));
  const int64_t count = IdCount(mode, device);
  if (groups.empty()) {
    groups.emplace_back(count);
    for (int64_t i = 0; i < count; ++i) groups[0][i] = i;
  }
  std::vector<bool> seen(count, false);
  for (const std::vector<int64_t>& group : groups) {
    for (int64_t id : group) {
      if (id < 0 || id >= count) {
        return std::unexpected(CollectiveError(instr, "replica_groups names id " + std::to_string(id) +
                                                          ", outside the slice of " + SliceText(device)));
      }
      if (seen[id]) {
        return std::unexpected(CollectiveError(instr, "replica_groups names id " + std::to_string(id) + " twice"));
      }
      seen[id] = true;
    }
  }
  return groups;
}

bool IsPermute(Opcode op) { return op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart; }

// The collectives that exchange data when they run (not their -done halves).
bool Exchanges(Opcode op) {
  if (CategoryOf(op) != OpcodeCategory::kCollective) return false;
  return op != Opcode::kAllGatherDone && op != Opcode::kAllReduceDone && op != Opcode::kCollectivePermuteDone;
}

}  // namespace

Result<GroupMode> CollectiveGroupMode(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> channel, GetChannelId(instr));
  KILN_ASSIGN_OR_RETURN(bool global_ids, GetBoolAttributeOr(instr, "use_global_device_ids", false));
  if (!channel) {
    if (global_ids) return std::unexpected(CollectiveError(instr, "use_global_device_ids=true needs a channel_id"));
    return GroupMode::kCrossReplica;
  }
  if (!HasGlobalIdsAttribute(instr.opcode())) return GroupMode::kCrossPartition;
  return global_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

Result<std::vector<int64_t>> CollectiveGroup(const Instruction& instr, const SliceDevice& device) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, CollectiveGroupMode(instr));
  const int64_t own = OwnId(mode, device);
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, CheckedGroups(instr, mode, device));
  const std::vector<int64_t>* mine = nullptr;
  for (const std::vector<int64_t>& group : groups) {
    if (std::find(group.begin(), group.end(), own) != group.end()) mine = &group;
  }
  if (mine == nullptr) {
    return std::unexpected(CollectiveError(instr, "replica_groups leave out id " + std::to_string(own) +
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
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> channel, GetChannelId(instr));
  KILN_ASSIGN_OR_RETURN(auto pairs, GetSourceTargetPairs(instr));
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
      return std::unexpected(CollectiveError(
          instr, "source_target_pairs {" + std::to_string(source) + "," + std::to_string(target) +
                     "} is outside the slice's " + std::to_string(count) +
                     (across_partitions ? " partition(s)" : " replica(s)")));
    }
    if (has_source[target]) {
      return std::unexpected(CollectiveError(instr, "source_target_pairs give target " + std::to_string(target) +
                                                   " two sources"));
    }
    has_source[target] = true;
    if (target == own) route.source_index = source;
  }
  return route;
}

Status CheckCollectives(const Module& module, int64_t replica_count, int64_t partition_count) {
  const SliceDevice slice{.replica_count = replica_count, .partition_count = partition_count};
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (!Exchanges(instr->opcode())) continue;
      auto where = [&](Error error) {
        return std::move(error.WithContext("computation " + std::string(computation->name())));
      };
      if (IsPermute(instr->opcode())) {
        // Every device's route, checked at once: the pairs name the same
        // ids whichever device reads them.
        if (auto route = CollectivePermuteRoute(*instr, slice); !route) return where(route.error());
        continue;
      }
      Result<GroupMode> mode = CollectiveGroupMode(*instr);
      if (!mode) return where(mode.error());
      Result<std::vector<std::vector<int64_t>>> groups = CheckedGroups(*instr, *mode, slice);
      if (!groups) return where(groups.error());
      int64_t listed = 0;
      for (const std::vector<int64_t>& group : *groups) {
        if (group.empty()) return where(CollectiveError(*instr, "replica_groups holds an empty group"));
        listed += static_cast<int64_t>(group.size());
      }
      if (listed != IdCount(*mode, slice)) {
        return where(CollectiveError(*instr, "replica_groups name " + std::to_string(listed) + " of the " +
                                                 std::to_string(IdCount(*mode, slice)) + " ids of the slice of " +
                                                 SliceText(slice) + "; every id must be in one group"));
      }
    }
  }
  return Ok();
}

}  // namespace kiln::hlo
