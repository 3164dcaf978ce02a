#include "runtime/timing/collective_groups.h"

#include <numeric>
#include <optional>
#include <string>

#include "compiler/hlo/op_attributes.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Opcode;

struct Layout {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t Device(int64_t replica, int64_t partition) const { return partition * replicas + replica; }
};

Error Fail(const hlo::Instruction& instr, const std::string& why) {
  return InvalidArgumentError("instruction %" + std::string(instr.name()) + ": " + why);
}

Result<Layout> LayoutFor(const hlo::Instruction& instr, GroupMode mode, int64_t chips,
                         const SliceAssignment& assignment) {
  Layout layout;
  if (assignment.replica_count == 0 && assignment.num_partitions == 0) {
    if (mode == GroupMode::kCrossReplica) {
      layout.replicas = chips;
    } else {
      layout.partitions = chips;
    }
    return layout;
  }
  layout.replicas = std::max<int64_t>(assignment.replica_count, 1);
  layout.partitions = std::max<int64_t>(assignment.num_partitions, 1);
  if (layout.replicas * layout.partitions != chips) {
    return Fail(instr, std::to_string(layout.replicas) + " replicas x " + std::to_string(layout.partitions) +
                           " partitions do not fill the slice's " + std::to_string(chips) + " chips");
  }
  return layout;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

Status CheckIds(const hlo::Instruction& instr, const std::vector<int64_t>& ids, int64_t limit, const char* what) {
  for (int64_t id : ids) {
    if (id < 0 || id >= limit) {
      return Fail(instr, std::string("names ") + what + " " + std::to_string(id) + ", but the slice runs " +
                             std::to_string(limit) + " " + what + (limit == 1 ? "" : "s"));
    }
  }
  return Ok();
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> ParticipantGroups(const hlo::Instruction& collective, int64_t chips,
                                                            const SliceAssignment& assignment) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, CollectiveGroupMode(collective));
  KILN_ASSIGN_OR_RETURN(Layout layout, LayoutFor(collective, mode, chips, assignment));
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> listed, hlo::GetReplicaGroups(collective));
  const int64_t universe = mode == GroupMode::kCrossPartition ? layout.partitions
                           : mode == GroupMode::kFlattenedId  ? chips
                                                              : layout.replicas;
  if (listed.empty()) listed.push_back(Iota(universe));
  const char* what = mode == GroupMode::kCrossPartition ? "partition"
                     : mode == GroupMode::kFlattenedId  ? "device"
                                                        : "replica";
  std::vector<std::vector<int64_t>> groups;
  for (const std::vector<int64_t>& ids : listed) {
    KILN_RETURN_IF_ERROR(CheckIds(collective, ids, universe, what));
    switch (mode) {
      case GroupMode::kCrossReplica:
        for (int64_t p = 0; p < layout.partitions; ++p) {
          std::vector<int64_t>& group = groups.emplace_back();
          for (int64_t r : ids) group.push_back(layout.Device(r, p));
        }
        break;
      case GroupMode::kCrossPartition:
        for (int64_t r = 0; r < layout.replicas; ++r) {
          std::vector<int64_t>& group = groups.emplace_back();
          for (int64_t p : ids) group.push_back(layout.Device(r, p));
        }
        break;
      case GroupMode::kCrossReplicaAndPartition: {
        std::vector<int64_t>& group = groups.emplace_back();
        for (int64_t r : ids) {
          for (int64_t p = 0; p < layout.partitions; ++p) group.push_back(layout.Device(r, p));
        }
        break;
      }
      case GroupMode::kFlattenedId: {
        std::vector<int64_t>& group = groups.emplace_back();
        for (int64_t id : ids) group.push_back(layout.Device(id / layout.partitions, id % layout.partitions));
        break;
      }
    }
  }
  return groups;
}

Result<std::vector<std::pair<int64_t, int64_t>>> PermutePairs(const hlo::Instruction& permute, int64_t chips,
                                                              const SliceAssignment& assignment) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, CollectiveGroupMode(permute));
  KILN_ASSIGN_OR_RETURN(Layout layout, LayoutFor(permute, mode, chips, assignment));
  KILN_ASSIGN_OR_RETURN(auto listed, hlo::GetSourceTargetPairs(permute));
  const bool across_partitions = mode != GroupMode::kCrossReplica;
  const int64_t universe = across_partitions ? layout.partitions : layout.replicas;
  const int64_t copies = across_partitions ? layout.replicas : layout.partitions;
  const char* what = across_partitions ? "partition" : "replica";
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const auto& [source, target] : listed) {
    KILN_RETURN_IF_ERROR(CheckIds(permute, {source, target}, universe, what));
    for (int64_t c = 0; c < copies; ++c) {
      if (across_partitions) {
        pairs.emplace_back(layout.Device(c, source), layout.Device(c, target));
      } else {
        pairs.emplace_back(layout.Device(source, c), layout.Device(target, c));
      }
    }
  }
  return pairs;
}

}  // namespace kiln::runtime::timing
