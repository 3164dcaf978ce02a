#include "compiler/spmd/spmd_partitioner.h"

#include <algorithm>

#include "base/str_cat.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "compiler/spmd/computation_partitioner.h"
#include "compiler/spmd/entry_shardings.h"

namespace kiln::spmd {
namespace {

using hlo::Opcode;

std::optional<int64_t> HeaderInt(const hlo::Module& module, std::string_view name) {
  const hlo::Attribute* a = module.FindAttribute(name);
  if (a == nullptr) return std::nullopt;
  Result<int64_t> v = hlo::DecodeInt(a->value);
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

bool IsCustomCallTo(const hlo::Instruction& instr, std::string_view target) {
  if (instr.opcode() != Opcode::kCustomCall) return false;
  Result<std::string> t = hlo::GetStringAttribute(instr, "custom_call_target");
  return t && *t == target;
}

template <typename Visit>
void ForEachInstruction(const hlo::Module& module, Visit visit) {
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) visit(*instr);
  }
}

// The devices a sharding's text names: tile assignment size, maximal id + 1.
int64_t ShardingDevices(const hlo::HloSharding& s) {
  if (s.IsTiled()) return static_cast<int64_t>(s.devices().size());
  if (s.IsMaximal()) return s.maximal_device() + 1;
  int64_t n = 1;
  for (const hlo::HloSharding& e : s.tuple_elements()) n = std::max(n, ShardingDevices(e));
  return n;
}

}  // namespace

bool IsPartitioned(const hlo::Module& module) {
  if (module.entry() == nullptr) return false;
  const std::string& name = module.entry()->name();
  if (name.size() >= 5 && name.ends_with("_spmd")) return true;
  bool shard_map = false;
  bool per_device_ops = false;
  ForEachInstruction(module, [&](const hlo::Instruction& instr) {
    shard_map |= IsCustomCallTo(instr, "SPMDFullToShardShape");
    Opcode op = instr.opcode();
    per_device_ops |= hlo::CategoryOf(op) == hlo::OpcodeCategory::kCollective || op == Opcode::kPartitionId ||
                      op == Opcode::kReplicaId;
  });
  return per_device_ops && !shard_map;
}

bool NeedsPartitioning(const hlo::Module& module) {
  if (IsPartitioned(module)) return false;
  bool sharded = false;
  ForEachInstruction(module, [&](const hlo::Instruction& instr) {
    const std::pmr::string* text = instr.AttributeText("sharding");
    if (text == nullptr) return;
    Result<hlo::HloSharding> s = hlo::ParseSharding(*text);
    // A bad annotation needs the partitioner too: it reports it.
    if (!s) {
      sharded = true;
      return;
    }
    for (const hlo::HloSharding& leaf : s->LeafShardings(instr.shape())) sharded |= !leaf.IsReplicated();
  });
  return sharded;
}

int64_t ModuleDeviceCount(const hlo::Module& module) {
  // The header says it whole: replicas x partitions.
  const int64_t partitions = std::max<int64_t>(HeaderInt(module, "num_partitions").value_or(1), 1);
  const int64_t replicas = std::max<int64_t>(HeaderInt(module, "replica_count").value_or(1), 1);
  if (partitions > 1) return std::min(partitions * std::min(replicas, hlo::kMaxShardingDevices), hlo::kMaxShardingDevices);
  int64_t devices = replicas;
  ForEachInstruction(module, [&](const hlo::Instruction& instr) {
    if (const std::pmr::string* text = instr.AttributeText("sharding")) {
      if (Result<hlo::HloSharding> s = hlo::ParseSharding(*text)) devices = std::max(devices, ShardingDevices(*s));
    }
    if (instr.FindAttribute("replica_groups") != nullptr) {
      if (auto groups = hlo::GetReplicaGroups(instr)) {
        for (const auto& group : *groups) {
          for (int64_t d : group) devices = std::max(devices, d + 1);
        }
      }
    }
    if (instr.FindAttribute("source_target_pairs") != nullptr) {
      if (auto pairs = hlo::GetSourceTargetPairs(instr)) {
        for (const auto& [from, to] : *pairs) devices = std::max({devices, from + 1, to + 1});
      }
    }
  });
  return std::min(devices, hlo::kMaxShardingDevices);
}

Result<std::unique_ptr<hlo::Module>> PartitionModule(const hlo::Module& module, int64_t num_partitions) {
  if (module.entry() == nullptr) return InvalidArgumentError("the module has no entry computation");
  if (num_partitions < 1 || num_partitions > hlo::kMaxShardingDevices) {
    return InvalidArgumentError(StrCat("cannot partition for ", num_partitions, " partitions"));
  }
  if (std::optional<int64_t> header = HeaderInt(module, "num_partitions");
      header && *header > 1 && *header != num_partitions) {
    return InvalidArgumentError(StrCat("the module was traced for num_partitions=", *header, ", not ",
                                       num_partitions));
  }
  if (IsPartitioned(module)) {
    return FailedPreconditionError(StrCat("module ", module.name(), " is already partitioned"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::HloSharding> parameters, EntryParameterShardings(module, num_partitions));
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding root, EntryRootSharding(module, num_partitions));
  PartitionSession session(num_partitions);
  std::string entry_name = session.module().UniqueComputationName(module.entry()->name() + "_spmd");
  ComputationPartitioner entry(*module.entry(), session, entry_name);
  KILN_ASSIGN_OR_RETURN(auto written, entry.Run(parameters, root));
  std::string header;
  if (std::optional<int64_t> replicas = HeaderInt(module, "replica_count")) {
    header = StrCat("replica_count=", *replicas);
  }
  // Each partition writes its shard of a donated argument's result in place
  // of its shard of that argument, as the whole program would (buffer
  // assignment checks the shard fits).
  if (const hlo::Attribute* aliases = module.FindAttribute("input_output_alias")) {
    header += StrCat(header.empty() ? "" : ", ", "input_output_alias=", aliases->value);
  }
  std::string text = session.module().ModuleText(module.name(), header, written.first);
  Result<std::unique_ptr<hlo::Module>> partitioned = hlo::ParseModule(text, module.name() + "_spmd");
  if (!partitioned) return InternalError("the partitioned module does not parse: " + partitioned.error().ToString());
  Status verified = hlo::VerifyModule(**partitioned);
  if (!verified) return InternalError("the partitioned module does not verify: " + verified.error().ToString());
  return std::move(*partitioned);
}

}  // namespace kiln::spmd
