// The partitioner's rules for ops other than dot: elementwise, broadcast,
// transpose, reshape, ops that keep dimensions whole, reduce,
// dynamic-update-slice, gather, custom calls, control flow and tuples.

#include <algorithm>

#include "base/str_cat.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/spmd/computation_partitioner.h"
#include "compiler/hlo/int_list_text.h"
#include "compiler/spmd/op_dims.h"
#include "compiler/spmd/tile_map.h"

namespace kiln::spmd {
namespace {

using hlo::IntListText;

using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

int64_t TileProduct(const hlo::HloSharding& s, int64_t rank) {
  int64_t n = 1;
  for (int64_t c : s.TileCounts(rank)) n *= c;
  return n;
}

}  // namespace

Result<PartitionedValue> ComputationPartitioner::Elementwise(const Instruction& instr, const hlo::HloSharding& target) {
  std::vector<std::string> operands;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    // Scalar operands of select and clamp are the same everywhere.
    bool same_rank = instr.operand(i)->shape().rank() == instr.shape().rank();
    KILN_ASSIGN_OR_RETURN(PartitionedValue v, Operand(instr, i, same_rank ? target : hlo::HloSharding::Replicate()));
    operands.push_back(v.name);
  }
  std::string name = EmitLike(instr, hlo::ShardShape(instr.shape(), target), operands);
  return PartitionedValue{name, instr.shape(), target};
}

Result<PartitionedValue> ComputationPartitioner::Broadcast(const Instruction& instr, const hlo::HloSharding& target) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::GetDimensions(instr));
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding operand_target, Derived(target, instr.shape().rank(), dims));
  KILN_ASSIGN_OR_RETURN(PartitionedValue operand, Operand(instr, 0, operand_target));
  std::string name = EmitLike(instr, hlo::ShardShape(instr.shape(), target), {operand.name});
  return PartitionedValue{name, instr.shape(), target};
}

Result<PartitionedValue> ComputationPartitioner::Transpose(const Instruction& instr, const hlo::HloSharding& target) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, hlo::GetDimensions(instr));
  std::vector<int64_t> from(perm.size(), -1);
  for (size_t j = 0; j < perm.size(); ++j) from[perm[j]] = static_cast<int64_t>(j);
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding operand_target, Derived(target, instr.shape().rank(), from));
  KILN_ASSIGN_OR_RETURN(PartitionedValue operand, Operand(instr, 0, operand_target));
  std::string name = EmitLike(instr, hlo::ShardShape(instr.shape(), target), {operand.name});
  return PartitionedValue{name, instr.shape(), target};
}

Result<PartitionedValue> ComputationPartitioner::Reshape(const Instruction& instr, const hlo::HloSharding& target) {
  const Shape& in = instr.operand(0)->shape();
  const Shape& out = instr.shape();
  if (!target.IsTiled() || !in.is_static() || !out.is_static()) return Whole(instr, target);
  std::optional<std::vector<int64_t>> from = ReshapeTileSource(out, in, target.TileCounts(out.rank()));
  if (!from) return Whole(instr, target);
  Result<hlo::HloSharding> operand_target = Derived(target, out.rank(), *from);
  // Every tiled result dimension must come from one operand dimension.
  if (!operand_target || TileProduct(*operand_target, in.rank()) != TileProduct(target, out.rank())) {
    return Whole(instr, target);
  }
  KILN_ASSIGN_OR_RETURN(PartitionedValue operand, Operand(instr, 0, *operand_target));
  Shape local = hlo::ShardShape(out, target);
  if (operand.Local().ElementCount() != local.ElementCount()) return Whole(instr, target);
  std::string name = EmitLike(instr, local, {operand.name});
  return PartitionedValue{name, out, target};
}

Result<PartitionedValue> ComputationPartitioner::KeepWholeDims(const Instruction& instr, const hlo::HloSharding& target) {
  std::optional<std::vector<int64_t>> whole = WholeDims(instr);
  int64_t rank = instr.shape().rank();
  std::vector<int64_t> counts = target.TileCounts(rank);
  bool fits = whole.has_value() && target.IsTiled();
  for (int64_t j = 0; fits && j < rank; ++j) fits = counts[j] == 1 || (*whole)[j] == j;
  if (!fits) return Whole(instr, target);
  // Tiled dimensions are whole in operand and result: same layout for both.
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding operand_target, Derived(target, rank, *whole));
  bool concatenate = instr.opcode() == Opcode::kConcatenate;
  std::vector<std::string> operands;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    bool data = i == 0 || concatenate;
    KILN_ASSIGN_OR_RETURN(PartitionedValue v, Operand(instr, i, data ? operand_target : hlo::HloSharding::Replicate()));
    operands.push_back(v.name);
  }
  Shape local = hlo::ShardShape(instr.shape(), target);
  std::map<std::string, std::string> overrides;
  if (instr.opcode() == Opcode::kSlice) {
    KILN_ASSIGN_OR_RETURN(hlo::SliceSpec spec, hlo::GetSliceSpec(instr));
    std::string text = "{";
    for (int64_t j = 0; j < rank; ++j) {
      int64_t limit = counts[j] > 1 ? local.dimensions(j) : spec.limits[j];
      text += StrCat(j > 0 ? "," : "", "[", counts[j] > 1 ? 0 : spec.starts[j], ":", limit, ":",
                     spec.strides[j], "]");
    }
    overrides["slice"] = text + "}";
  } else if (instr.opcode() == Opcode::kDynamicSlice) {
    overrides["dynamic_slice_sizes"] = IntListText(local.dimensions());
  }
  std::string name = EmitLike(instr, local, operands, overrides);
  return PartitionedValue{name, instr.shape(), target};
}

Result<PartitionedValue> ComputationPartitioner::Reduce(const Instruction& instr, const hlo::HloSharding& target) {
  if (instr.operand_count() != 2 || instr.shape().IsTuple()) return Whole(instr, target);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reduced, hlo::GetDimensions(instr));
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* reducer, hlo::GetCalledComputation(instr, "to_apply"));
  const Shape& in = instr.operand(0)->shape();
  auto is_reduced = [&](int64_t i) { return std::find(reduced.begin(), reduced.end(), i) != reduced.end(); };
  std::vector<int64_t> kept;
  std::vector<int64_t> operand_from(in.rank(), -1);
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (is_reduced(i)) continue;
    operand_from[i] = static_cast<int64_t>(kept.size());
    kept.push_back(i);
  }
  // Reduce where the data is when it is tiled; otherwise cut it as the
  // result is cut.
  const PartitionedValue& current = ValueOf(instr.operand(0));
  hlo::HloSharding operand_target = current.sharding;
  if (!current.sharding.IsTiled() || current.sharding.HasManualSubgroup()) {
    KILN_ASSIGN_OR_RETURN(operand_target, Derived(target, instr.shape().rank(), operand_from));
  }
  KILN_ASSIGN_OR_RETURN(PartitionedValue operand, Operand(instr, 0, operand_target));
  KILN_ASSIGN_OR_RETURN(PartitionedValue init, Operand(instr, 1, hlo::HloSharding::Replicate()));
  TileMap map = TileMapOf(operand.sharding, in.rank(), b_.num_devices());
  std::vector<int64_t> tiled_reduced;
  for (int64_t i : reduced) {
    if (map.counts[i] > 1) tiled_reduced.push_back(i);
  }
  if (!tiled_reduced.empty()) operand = MaskPadding(b_, operand, tiled_reduced, init.name);
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding result_sharding, ToSharding(Remap(map, kept)));
  Shape local = hlo::ShardShape(instr.shape(), result_sharding);
  std::string name = EmitLike(instr, local, {operand.name, init.name});
  if (!tiled_reduced.empty()) {
    KILN_ASSIGN_OR_RETURN(auto groups, VaryingGroups(map, tiled_reduced));
    name = EmitAllReduce(b_, name, local, groups, session_.module().CopyVerbatim(*reducer));
  }
  return Reshard(b_, PartitionedValue{name, instr.shape(), result_sharding}, target);
}

Result<PartitionedValue> ComputationPartitioner::Gather(const Instruction& instr, const hlo::HloSharding& target) {
  // A result tiled only along batch positions is gathered where its indices
  // lie: each device looks its own indices up in the whole operand (an
  // embedding lookup of batch-tiled tokens moves nothing).
  std::optional<std::vector<int64_t>> from = GatherBatchSource(instr);
  const int64_t rank = instr.shape().rank();
  if (!from || !target.IsTiled() || target.HasManualSubgroup()) return Whole(instr, target);
  std::vector<int64_t> counts = target.TileCounts(rank);
  for (int64_t j = 0; j < rank; ++j) {
    if (counts[j] > 1 && (*from)[j] < 0) return Whole(instr, target);
  }
  std::vector<int64_t> indices_from(instr.operand(1)->shape().rank(), -1);
  for (int64_t j = 0; j < rank; ++j) {
    if ((*from)[j] >= 0) indices_from[(*from)[j]] = j;
  }
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding indices_target, Derived(target, rank, indices_from));
  KILN_ASSIGN_OR_RETURN(PartitionedValue operand, Operand(instr, 0, hlo::HloSharding::Replicate()));
  KILN_ASSIGN_OR_RETURN(PartitionedValue indices, Operand(instr, 1, indices_target));
  std::string name = EmitLike(instr, hlo::ShardShape(instr.shape(), target), {operand.name, indices.name});
  return PartitionedValue{name, instr.shape(), target};
}

Result<PartitionedValue> ComputationPartitioner::DynamicUpdateSlice(const Instruction& instr,
                                                                    const hlo::HloSharding& target) {
  const Shape& shape = instr.shape();
  const Shape& update_shape = instr.operand(1)->shape();
  int64_t rank = shape.rank();
  if (!target.IsTiled() || !shape.is_static()) return Whole(instr, target);
  std::vector<int64_t> counts = target.TileCounts(rank);
  bool whole = true;
  for (int64_t j = 0; j < rank; ++j) whole &= counts[j] == 1 || update_shape.dimensions(j) == shape.dimensions(j);
  KILN_ASSIGN_OR_RETURN(PartitionedValue operand, Operand(instr, 0, target));
  if (whole) {
    // The update covers the tiled dimensions: each device updates its shard.
    std::vector<std::string> operands = {operand.name};
    for (int64_t i = 1; i < instr.operand_count(); ++i) {
      KILN_ASSIGN_OR_RETURN(PartitionedValue v, Operand(instr, i, i == 1 ? target : hlo::HloSharding::Replicate()));
      operands.push_back(v.name);
    }
    std::string name = EmitLike(instr, hlo::ShardShape(shape, target), operands);
    return PartitionedValue{name, shape, target};
  }
  // The update lands across shards: every device takes the window of the
  // whole update that falls in its shard and keeps its own data elsewhere.
  KILN_ASSIGN_OR_RETURN(PartitionedValue update, Operand(instr, 1, hlo::HloSharding::Replicate()));
  Shape local = hlo::ShardShape(shape, target);
  Shape s32(PrimitiveType::kS32, {});
  Shape index_shape(PrimitiveType::kS32, local.dimensions());
  Shape pred_shape(PrimitiveType::kPred, local.dimensions());
  std::string zero = b_.ScalarConstant(PrimitiveType::kS32, "0");
  std::string padding;
  std::vector<int64_t> padded_dims = update_shape.dimensions();
  for (int64_t j = 0; j < rank; ++j) {
    padding += StrCat(j > 0 ? "x" : "", local.dimensions(j), "_", local.dimensions(j));
    padded_dims[j] += 2 * local.dimensions(j);
  }
  std::string fill = b_.ScalarConstant(update_shape.element_type(), update_shape.element_type() == PrimitiveType::kPred ? "false" : "0");
  std::string padded = b_.Add(update.name + ".pad", Shape(update_shape.element_type(), padded_dims),
                              StrCat("pad(%", update.name, ", %", fill, "), padding=", padding));
  std::vector<std::string> window_starts;
  std::string mask;
  for (int64_t j = 0; j < rank; ++j) {
    KILN_ASSIGN_OR_RETURN(PartitionedValue index, Operand(instr, 2 + j, hlo::HloSharding::Replicate()));
    std::string index_s32 = index.name;
    if (instr.operand(2 + j)->shape().element_type() != PrimitiveType::kS32) {
      index_s32 = b_.Add("index", s32, StrCat("convert(%", index.name, ")"));
    }
    int64_t size = local.dimensions(j);
    int64_t extent = update_shape.dimensions(j);
    // XLA clamps the start so the update fits.
    std::string start = b_.Add("start", s32, StrCat("clamp(%", zero, ", %", index_s32, ", %",
                                                    b_.ScalarConstant(PrimitiveType::kS32,
                                                                      std::to_string(shape.dimensions(j) - extent)),
                                                    ")"));
    std::vector<int64_t> offsets(b_.num_devices());
    for (int64_t d = 0; d < b_.num_devices(); ++d) offsets[d] = hlo::DeviceShardExtent(shape, target, d).offset[j];
    std::string offset = b_.PerDeviceValue(offsets);
    std::string shifted = b_.Add("window", s32, StrCat("subtract(%", offset, ", %", start, ")"));
    shifted = b_.Add("window", s32, StrCat("add(%", shifted, ", %",
                                           b_.ScalarConstant(PrimitiveType::kS32, std::to_string(size)), ")"));
    window_starts.push_back(b_.Add("window", s32, StrCat("clamp(%", zero, ", %", shifted, ", %",
                                                         b_.ScalarConstant(PrimitiveType::kS32,
                                                                           std::to_string(extent + size)),
                                                         ")")));
    // Positions start <= offset + i < start + extent take the update.
    std::string iota = b_.Add("position", index_shape, StrCat("iota(), iota_dimension=", j));
    std::string base = b_.Add("position", index_shape, StrCat("broadcast(%", offset, "), dimensions={}"));
    std::string position = b_.Add("position", index_shape, StrCat("add(%", iota, ", %", base, ")"));
    std::string low = b_.Add("low", index_shape, StrCat("broadcast(%", start, "), dimensions={}"));
    std::string end = b_.Add("end", s32, StrCat("add(%", start, ", %",
                                                b_.ScalarConstant(PrimitiveType::kS32, std::to_string(extent)), ")"));
    std::string high = b_.Add("high", index_shape, StrCat("broadcast(%", end, "), dimensions={}"));
    std::string ge = b_.Add("in-update", pred_shape, StrCat("compare(%", position, ", %", low, "), direction=GE"));
    std::string lt = b_.Add("in-update", pred_shape, StrCat("compare(%", position, ", %", high, "), direction=LT"));
    std::string in = b_.Add("in-update", pred_shape, StrCat("and(%", ge, ", %", lt, ")"));
    mask = mask.empty() ? in : b_.Add("in-update", pred_shape, StrCat("and(%", mask, ", %", in, ")"));
  }
  std::vector<std::string> slice_operands = {padded};
  slice_operands.insert(slice_operands.end(), window_starts.begin(), window_starts.end());
  std::string window = b_.Add(update.name + ".window", local,
                              StrCat("dynamic-slice(", OperandList(slice_operands),
                                     "), dynamic_slice_sizes=", IntListText(local.dimensions())));
  std::string name =
      b_.Add(instr.name(), local, StrCat("select(%", mask, ", %", window, ", %", operand.name, ")"));
  return PartitionedValue{name, shape, target};
}

Result<PartitionedValue> ComputationPartitioner::CustomCall(const Instruction& instr, const hlo::HloSharding& target) {
  KILN_ASSIGN_OR_RETURN(std::string call_target, hlo::GetStringAttribute(instr, "custom_call_target"));
  if (call_target == "Sharding" && instr.operand_count() == 1) {
    KILN_ASSIGN_OR_RETURN(PartitionedValue v, Operand(instr, 0, target));
    return PartitionedValue{v.name, instr.shape(), target};
  }
  if (call_target == "SPMDFullToShardShape" && instr.operand_count() == 1) {
    // The operand is laid out as the shard_map cuts it; each device's shard
    // is its manual value.
    const PartitionedValue& full = ValueOf(instr.operand(0));
    if (!full.Local().SameDimensions(instr.shape())) {
      return InvalidArgumentError(StrCat("the shards of ", full.global.ToString(), " laid out as ",
                                         full.sharding.ToString(), " are ", full.Local().ToString(),
                                         ", not ", instr.shape().ToString()));
    }
    std::string name = b_.Add(instr.name(), instr.shape(), StrCat("copy(%", full.name, ")"));
    return PartitionedValue{name, instr.shape(), hlo::HloSharding::Manual()};
  }
  if (call_target == "SPMDShardToFullShape" && instr.operand_count() == 1) {
    const PartitionedValue& shard = ValueOf(instr.operand(0));
    Shape local = hlo::ShardShape(instr.shape(), target);
    if (!shard.Local().SameDimensions(local)) {
      return InvalidArgumentError(StrCat("the shards ", shard.Local().ToString(), " do not make ",
                                         instr.shape().ToString(), " laid out as ", target.ToString()));
    }
    std::string name = b_.Add(instr.name(), local, StrCat("copy(%", shard.name, ")"));
    return PartitionedValue{name, instr.shape(), target};
  }
  if (AllManual(target)) return Manual(instr);
  return Whole(instr, target);
}

Result<PartitionedValue> ComputationPartitioner::TupleOps(const Instruction& instr, const hlo::HloSharding& target) {
  if (instr.opcode() == Opcode::kGetTupleElement) {
    KILN_ASSIGN_OR_RETURN(int64_t index, hlo::GetTupleIndex(instr));
    const PartitionedValue& tuple = ValueOf(instr.operand(0));
    PartitionedValue element{"", instr.shape(), tuple.sharding.TupleElement(tuple.global, index)};
    element.name = EmitLike(instr, element.Local(), {tuple.name});
    return Reshard(b_, element, target);
  }
  std::vector<std::string> operands;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    hlo::HloSharding want = instr.opcode() == Opcode::kTuple ? target.TupleElement(instr.shape(), i) : target;
    KILN_ASSIGN_OR_RETURN(PartitionedValue v, Operand(instr, i, want));
    operands.push_back(v.name);
  }
  std::string name = EmitLike(instr, LocalShape(instr.shape(), target), operands);
  return PartitionedValue{name, instr.shape(), target};
}

Result<PartitionedValue> ComputationPartitioner::ControlFlow(const Instruction& instr, const hlo::HloSharding& target) {
  const Shape& shape = instr.shape();
  if (instr.opcode() == Opcode::kWhile) {
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* body, hlo::GetCalledComputation(instr, "body"));
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* condition, hlo::GetCalledComputation(instr, "condition"));
    KILN_ASSIGN_OR_RETURN(PartitionedValue state, Operand(instr, 0, target));
    KILN_ASSIGN_OR_RETURN(WrittenComputation b, session_.Partitioned(*body, {target}, target));
    KILN_ASSIGN_OR_RETURN(WrittenComputation c,
                          session_.Partitioned(*condition, {target}, hlo::HloSharding::Replicate()));
    std::string name = EmitLike(instr, LocalShape(shape, target), {state.name},
                                {{"body", "%" + b.name}, {"condition", "%" + c.name}});
    return PartitionedValue{name, shape, target};
  }
  if (instr.opcode() == Opcode::kCall) {
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* callee, hlo::GetCalledComputation(instr, "to_apply"));
    std::vector<hlo::HloSharding> parameters;
    std::vector<std::string> operands;
    for (const Instruction* op : instr.operands()) {
      parameters.push_back(ValueOf(op).sharding);
      operands.push_back(ValueOf(op).name);
    }
    KILN_ASSIGN_OR_RETURN(WrittenComputation c, session_.Partitioned(*callee, parameters, std::nullopt));
    std::string name = EmitLike(instr, LocalShape(shape, c.root), operands, {{"to_apply", "%" + c.name}});
    return Reshard(b_, PartitionedValue{name, shape, c.root}, target);
  }
  // Conditional: the selector is the same everywhere; branches return
  // `target`.
  KILN_ASSIGN_OR_RETURN(PartitionedValue selector, Operand(instr, 0, hlo::HloSharding::Replicate()));
  std::vector<std::string> operands = {selector.name};
  bool listed = instr.FindAttribute("branch_computations") != nullptr;
  std::vector<const hlo::Computation*> branches;
  if (listed) {
    KILN_ASSIGN_OR_RETURN(branches, hlo::GetCalledComputations(instr, "branch_computations"));
  } else {
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* t, hlo::GetCalledComputation(instr, "true_computation"));
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* f, hlo::GetCalledComputation(instr, "false_computation"));
    branches = {t, f};
  }
  if (static_cast<int64_t>(branches.size()) + 1 != instr.operand_count()) return Whole(instr, target);
  std::vector<std::string> names;
  for (size_t i = 0; i < branches.size(); ++i) {
    const PartitionedValue& arg = ValueOf(instr.operand(i + 1));
    operands.push_back(arg.name);
    KILN_ASSIGN_OR_RETURN(WrittenComputation w, session_.Partitioned(*branches[i], {arg.sharding}, target));
    names.push_back("%" + w.name);
  }
  std::map<std::string, std::string> overrides;
  if (listed) {
    std::string list = "{";
    for (size_t i = 0; i < names.size(); ++i) list += (i > 0 ? ", " : "") + names[i];
    overrides["branch_computations"] = list + "}";
  } else {
    overrides["true_computation"] = names[0];
    overrides["false_computation"] = names[1];
  }
  std::string name = EmitLike(instr, LocalShape(shape, target), operands, overrides);
  return PartitionedValue{name, shape, target};
}

}  // namespace kiln::spmd
