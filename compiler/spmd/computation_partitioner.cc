#include "compiler/spmd/computation_partitioner.h"

#include <set>

#include "base/str_cat.h"
#include "compiler/spmd/tile_map.h"

namespace kiln::spmd {
namespace {

using hlo::Opcode;

std::string ShardingsKey(const std::vector<hlo::HloSharding>& shardings) {
  std::string key;
  for (const hlo::HloSharding& s : shardings) key += s.ToString() + ";";
  return key;
}

// Ops whose effect is more than their value, which a global-shape module
// cannot hold outside a manual region.
bool HasSideEffects(Opcode op) {
  switch (op) {
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return true;
    default:
      return hlo::CategoryOf(op) == hlo::OpcodeCategory::kCollective;
  }
}

}  // namespace

bool AllManual(const hlo::HloSharding& sharding) {
  if (!sharding.IsTuple()) return sharding.IsManual();
  if (sharding.tuple_elements().empty()) return false;
  for (const hlo::HloSharding& e : sharding.tuple_elements()) {
    if (!e.IsManual()) return false;
  }
  return true;
}

Result<WrittenComputation> PartitionSession::Partitioned(const hlo::Computation& computation,
                                                         const std::vector<hlo::HloSharding>& parameters,
                                                         const std::optional<hlo::HloSharding>& root) {
  std::string key = StrCat(computation.name(), "|", ShardingsKey(parameters), "|", root ? root->ToString() : "");
  if (auto it = written_.find(key); it != written_.end()) return it->second;
  std::string name = module_.UniqueComputationName(computation.name() + ".spmd");
  ComputationPartitioner partitioner(computation, *this, name);
  KILN_ASSIGN_OR_RETURN(auto written, partitioner.Run(parameters, root));
  module_.AddComputation(std::move(written.first));
  WrittenComputation out{name, std::move(written.second)};
  written_.emplace(key, out);
  return out;
}

Result<std::pair<std::string, hlo::HloSharding>> ComputationPartitioner::Run(const std::vector<hlo::HloSharding>& parameters,
                                                                        const std::optional<hlo::HloSharding>& root) {
  KILN_ASSIGN_OR_RETURN(shardings_, PropagateShardings(computation_, parameters, b_.num_devices()));
  for (const auto& instr : computation_.instructions()) {
    const hlo::HloSharding& target = shardings_.at(instr.get());
    if (instr->opcode() == Opcode::kParameter) {
      std::string name = b_.Add(instr->name(), LocalShape(instr->shape(), target),
                                StrCat("parameter(", instr->parameter_number(), ")"));
      values_.emplace(instr.get(), PartitionedValue{name, instr->shape(), target});
      continue;
    }
    Result<PartitionedValue> value = Partition(*instr, target);
    if (!value) {
      return value.error().WithContext(
          StrCat("partitioning instruction %", instr->name(), " in computation %", computation_.name()));
    }
    values_.emplace(instr.get(), std::move(*value));
  }
  PartitionedValue result = values_.at(computation_.root());
  if (root) {
    KILN_ASSIGN_OR_RETURN(result, Reshard(b_, result, *root));
  }
  return std::make_pair(b_.Finish(result.name), result.sharding);
}

Result<PartitionedValue> ComputationPartitioner::Operand(const Instruction& instr, int64_t i,
                                                         const hlo::HloSharding& target) {
  // One reshard per value and layout, however many users want it.
  auto key = std::make_pair(instr.operand(i), target.ToString());
  if (auto it = resharded_.find(key); it != resharded_.end()) return it->second;
  KILN_ASSIGN_OR_RETURN(PartitionedValue v, Reshard(b_, ValueOf(instr.operand(i)), target));
  resharded_.emplace(std::move(key), v);
  return v;
}

Result<hlo::HloSharding> ComputationPartitioner::Derived(const hlo::HloSharding& target, int64_t target_rank,
                                                    const std::vector<int64_t>& from) const {
  if (!target.IsTiled()) return hlo::HloSharding::Replicate();
  return ToSharding(Remap(TileMapOf(target, target_rank, b_.num_devices()), from));
}

std::string ComputationPartitioner::EmitLike(const Instruction& instr, const hlo::Shape& shape,
                                             const std::vector<std::string>& operands,
                                             const std::map<std::string, std::string>& overrides) {
  std::string body = instr.OpcodeText() + "(";
  if (instr.opcode() == Opcode::kParameter) {
    body += std::to_string(instr.parameter_number());
  } else if (instr.opcode() == Opcode::kConstant && instr.literal() != nullptr) {
    body += instr.literal()->ValueToString();
  } else {
    body += OperandList(operands);
  }
  body += ")";
  std::set<std::string> used;
  for (const hlo::Attribute& a : instr.attributes()) {
    if (a.name == "sharding" || a.kind == hlo::Attribute::Kind::kInstructions) continue;
    if (auto it = overrides.find(std::string(a.name)); it != overrides.end()) {
      body += StrCat(", ", a.name, "=", it->second);
      used.emplace(a.name);
      continue;
    }
    body += StrCat(", ", a.name, "=");
    if (a.kind != hlo::Attribute::Kind::kComputations) {
      body += a.value;
      continue;
    }
    if (a.braced) body += "{";
    for (size_t i = 0; i < a.computations.size(); ++i) {
      body += StrCat(i > 0 ? ", " : "", "%", session_.module().CopyVerbatim(*a.computations[i]));
    }
    if (a.braced) body += "}";
  }
  for (const auto& [name, value] : overrides) {
    if (!used.contains(name)) body += StrCat(", ", name, "=", value);
  }
  return b_.Add(instr.name(), shape, body);
}

Result<PartitionedValue> ComputationPartitioner::Partition(const Instruction& instr, const hlo::HloSharding& target) {
  Opcode op = instr.opcode();
  if (op == Opcode::kCustomCall) return CustomCall(instr, target);
  if (AllManual(target)) return Manual(instr);
  if (HasSideEffects(op)) {
    return UnimplementedError(StrCat(instr.OpcodeText(),
                                     " outside a manually sharded region cannot be partitioned"));
  }
  if (hlo::IsElementwise(op)) return Elementwise(instr, target);
  switch (op) {
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier:
      return TupleOps(instr, target);
    case Opcode::kBroadcast:
      return Broadcast(instr, target);
    case Opcode::kTranspose:
      return Transpose(instr, target);
    case Opcode::kReshape:
      return Reshape(instr, target);
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kDynamicSlice:
    case Opcode::kConcatenate:
      return KeepWholeDims(instr, target);
    case Opcode::kReduce:
      return Reduce(instr, target);
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSlice(instr, target);
    case Opcode::kGather:
      return Gather(instr, target);
    case Opcode::kDot:
      return Dot(instr, target);
    case Opcode::kWhile:
    case Opcode::kCall:
    case Opcode::kConditional:
      return ControlFlow(instr, target);
    default:
      return Whole(instr, target);
  }
}

Result<PartitionedValue> ComputationPartitioner::Whole(const Instruction& instr, const hlo::HloSharding& target) {
  std::vector<std::string> operands;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    KILN_ASSIGN_OR_RETURN(PartitionedValue v, Operand(instr, i, hlo::HloSharding::Replicate()));
    operands.push_back(v.name);
  }
  std::string name = EmitLike(instr, instr.shape(), operands);
  return Reshard(b_, PartitionedValue{name, instr.shape(), hlo::HloSharding::Replicate()}, target);
}

Result<PartitionedValue> ComputationPartitioner::Manual(const Instruction& instr) {
  std::vector<std::string> operands;
  for (const Instruction* op : instr.operands()) {
    const PartitionedValue& v = ValueOf(op);
    for (const hlo::HloSharding& leaf : v.sharding.LeafShardings(v.global)) {
      if (!leaf.IsManual() && !leaf.IsReplicated()) {
        return UnimplementedError(StrCat("operand %", op->name(), " laid out as ", v.sharding.ToString(),
                                         " used in a manually sharded region"));
      }
    }
    operands.push_back(v.name);
  }
  std::string name = EmitLike(instr, instr.shape(), operands);
  return PartitionedValue{name, instr.shape(), hlo::HloSharding::Manual()};
}

}  // namespace kiln::spmd
