#include "compiler/spmd/reshard.h"

#include <algorithm>

#include "base/str_cat.h"
#include "compiler/hlo/int_list_text.h"
#include "compiler/spmd/tile_map.h"

namespace kiln::spmd {
namespace {

using hlo::IntListText;

using hlo::PrimitiveType;
using hlo::Shape;

std::string ZeroText(PrimitiveType type) {
  if (type == PrimitiveType::kPred) return "false";
  if (hlo::IsComplex(type)) return "(0, 0)";
  return "0";
}

Shape WithDims(const Shape& like, std::vector<int64_t> dims) {
  Shape s(like.element_type(), std::move(dims));
  return s;
}

// Per device and dimension: where its shard starts and how much of it is data.
struct Extents {
  std::vector<hlo::ShardExtent> of;  // by device
  std::vector<int64_t> size;    // shard size per dimension
};

Extents ExtentsOf(const Shape& global, const hlo::HloSharding& sharding, int64_t num_devices) {
  Extents e;
  std::vector<int64_t> counts = sharding.TileCounts(global.rank());
  for (int64_t i = 0; i < global.rank(); ++i) e.size.push_back(hlo::ShardSize(global.dimensions(i), counts[i]));
  for (int64_t d = 0; d < num_devices; ++d) e.of.push_back(hlo::DeviceShardExtent(global, sharding, d));
  return e;
}

// Dimensions where some device's target data is not inside its source shard.
std::vector<int64_t> DimsToGather(const Shape& global, const hlo::HloSharding& from, const hlo::HloSharding& to,
                                  int64_t num_devices) {
  Extents s = ExtentsOf(global, from, num_devices);
  Extents t = ExtentsOf(global, to, num_devices);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < global.rank(); ++i) {
    for (int64_t d = 0; d < num_devices; ++d) {
      int64_t t_begin = t.of[d].offset[i];
      int64_t t_end = t_begin + t.of[d].valid[i];
      int64_t s_begin = s.of[d].offset[i];
      int64_t s_end = s_begin + s.of[d].valid[i];
      if (t.of[d].valid[i] > 0 && (t_begin < s_begin || t_end > s_end)) {
        dims.push_back(i);
        break;
      }
    }
  }
  return dims;
}

bool SameLayout(const Shape& global, const hlo::HloSharding& a, const hlo::HloSharding& b, int64_t num_devices) {
  if (a == b) return true;
  if (a.IsTuple() || b.IsTuple() || a.IsManual() || b.IsManual() || a.IsMaximal() || b.IsMaximal()) return false;
  TileMap ma = TileMapOf(a, global.rank(), num_devices);
  TileMap mb = TileMapOf(b, global.rank(), num_devices);
  return ma.counts == mb.counts && ma.index == mb.index;
}

// All-gathers dimension `dim` of a tiled value.
Result<PartitionedValue> GatherDim(ComputationTextBuilder& b, const PartitionedValue& v, int64_t dim) {
  int64_t n = b.num_devices();
  TileMap map = TileMapOf(v.sharding, v.global.rank(), n);
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, VaryingGroups(map, {dim}));
  Shape local = v.Local();
  std::vector<int64_t> dims = local.dimensions();
  dims[dim] *= map.counts[dim];
  std::string name = b.Add(v.name + ".all-gather", WithDims(local, dims),
                           StrCat("all-gather(%", v.name, "), channel_id=", b.module().NextChannelId(),
                                  ", replica_groups=", ReplicaGroupsText(groups), ", dimensions={", dim,
                                  "}, use_global_device_ids=true"));
  if (dims[dim] != v.global.dimensions(dim)) {
    // Uneven: drop the padding the last shards carried.
    std::vector<int64_t> kept = dims;
    kept[dim] = v.global.dimensions(dim);
    std::string spec;
    for (size_t i = 0; i < kept.size(); ++i) spec += StrCat(i > 0 ? "," : "", "[0:", kept[i], "]");
    name = b.Add(name + ".slice", WithDims(local, kept), StrCat("slice(%", name, "), slice={", spec, "}"));
  }
  map.counts[dim] = 1;
  for (auto& index : map.index) index[dim] = 0;
  KILN_ASSIGN_OR_RETURN(hlo::HloSharding gathered, ToSharding(map));
  return PartitionedValue{name, v.global, std::move(gathered)};
}

// Cuts each device's `target` shard out of a value whose shards contain it.
PartitionedValue SliceTo(ComputationTextBuilder& b, const PartitionedValue& v, const hlo::HloSharding& target) {
  int64_t n = b.num_devices();
  int64_t rank = v.global.rank();
  Extents s = ExtentsOf(v.global, v.sharding, n);
  Extents t = ExtentsOf(v.global, target, n);
  Shape local = v.Local();
  std::string name = v.name;
  std::vector<int64_t> overflow(rank, 0);
  bool padded = false;
  std::vector<std::vector<int64_t>> offsets(rank, std::vector<int64_t>(n, 0));
  for (int64_t i = 0; i < rank; ++i) {
    for (int64_t d = 0; d < n; ++d) {
      // A device holding padding only may start anywhere; keep it in range.
      int64_t rel = t.of[d].valid[i] > 0 ? t.of[d].offset[i] - s.of[d].offset[i] : 0;
      offsets[i][d] = rel;
      overflow[i] = std::max(overflow[i], rel + t.size[i] - local.dimensions(i));
    }
    padded |= overflow[i] > 0;
  }
  if (padded) {
    std::string config;
    std::vector<int64_t> dims = local.dimensions();
    for (int64_t i = 0; i < rank; ++i) {
      config += StrCat(i > 0 ? "x" : "", "0_", std::max<int64_t>(overflow[i], 0));
      dims[i] += std::max<int64_t>(overflow[i], 0);
    }
    std::string zero = b.ScalarConstant(local.element_type(), ZeroText(local.element_type()));
    name = b.Add(name + ".pad", WithDims(local, dims), StrCat("pad(%", name, ", %", zero, "), padding=", config));
  }
  std::vector<std::string> operands = {name};
  for (int64_t i = 0; i < rank; ++i) operands.push_back(b.PerDeviceValue(offsets[i]));
  Shape target_local = hlo::ShardShape(v.global, target);
  std::string sliced = b.Add(v.name + ".reshard", target_local,
                             StrCat("dynamic-slice(", OperandList(operands),
                                    "), dynamic_slice_sizes=", IntListText(target_local.dimensions())));
  return PartitionedValue{sliced, v.global, target};
}

// Every device gets the value device `owner` holds.
PartitionedValue BroadcastFrom(ComputationTextBuilder& b, const PartitionedValue& v, int64_t owner) {
  Shape local = v.Local();
  PrimitiveType type = local.element_type();
  Shape pred_scalar(PrimitiveType::kPred, {});
  std::string mine = b.Add("is-owner", pred_scalar,
                           StrCat("compare(%", b.PartitionId(), ", %",
                                  b.ScalarConstant(PrimitiveType::kS32, std::to_string(owner)), "), direction=EQ"));
  Shape pred_shape(PrimitiveType::kPred, local.dimensions());
  std::string mask = b.Add("is-owner", pred_shape, StrCat("broadcast(%", mine, "), dimensions={}"));
  std::string zeros = b.Add("zeros", local,
                            StrCat("broadcast(%", b.ScalarConstant(type, ZeroText(type)), "), dimensions={}"));
  std::string kept = b.Add(v.name + ".owned", local, StrCat("select(%", mask, ", %", v.name, ", %", zeros, ")"));
  std::vector<int64_t> all(b.num_devices());
  for (int64_t d = 0; d < b.num_devices(); ++d) all[d] = d;
  std::string shared = EmitAllReduce(b, kept, local, {all}, SumReducer(b.module(), type));
  return PartitionedValue{shared, v.global, hlo::HloSharding::Replicate()};
}

}  // namespace

hlo::Shape LocalShape(const hlo::Shape& global, const hlo::HloSharding& sharding) {
  if (!global.IsTuple()) return hlo::ShardShape(global, sharding);
  std::vector<Shape> elements;
  for (size_t i = 0; i < global.tuple_shapes().size(); ++i) {
    elements.push_back(LocalShape(global.tuple_shapes(i), sharding.TupleElement(global, static_cast<int64_t>(i))));
  }
  return Shape::Tuple(std::move(elements));
}

hlo::Shape PartitionedValue::Local() const { return LocalShape(global, sharding); }

std::string ReplicaGroupsText(const std::vector<std::vector<int64_t>>& groups) {
  std::string out = "{";
  for (size_t i = 0; i < groups.size(); ++i) out += StrCat(i > 0 ? "," : "", IntListText(groups[i]));
  return out + "}";
}

std::string SumReducer(ModuleTextBuilder& module, PrimitiveType type) {
  return module.Reducer(type, type == PrimitiveType::kPred ? "or" : "add");
}

std::string EmitAllReduce(ComputationTextBuilder& b, const std::string& name, const hlo::Shape& shape,
                          const std::vector<std::vector<int64_t>>& groups, const std::string& reducer) {
  return b.Add(name + ".all-reduce", shape,
               StrCat("all-reduce(%", name, "), channel_id=", b.module().NextChannelId(),
                      ", replica_groups=", ReplicaGroupsText(groups), ", use_global_device_ids=true, to_apply=%",
                      reducer));
}

Result<PartitionedValue> Reshard(ComputationTextBuilder& b, const PartitionedValue& value,
                                 const hlo::HloSharding& target) {
  int64_t n = b.num_devices();
  if (value.global.IsTuple()) {
    if (value.sharding == target) return value;
    std::vector<std::string> elements;
    for (size_t i = 0; i < value.global.tuple_shapes().size(); ++i) {
      int64_t index = static_cast<int64_t>(i);
      PartitionedValue element{"", value.global.tuple_shapes(i), value.sharding.TupleElement(value.global, index)};
      element.name = b.Add(value.name + ".element", element.Local(),
                           StrCat("get-tuple-element(%", value.name, "), index=", i));
      KILN_ASSIGN_OR_RETURN(PartitionedValue moved, Reshard(b, element, target.TupleElement(value.global, index)));
      elements.push_back(moved.name);
    }
    PartitionedValue out{"", value.global, target};
    out.name = b.Add(value.name + ".tuple", out.Local(), StrCat("tuple(", OperandList(elements), ")"));
    return out;
  }
  if (!value.global.IsArray() || SameLayout(value.global, value.sharding, target, n)) {
    return PartitionedValue{value.name, value.global, target};
  }
  bool from_manual = value.sharding.IsManual() || value.sharding.HasManualSubgroup();
  bool to_manual = target.IsManual() || target.HasManualSubgroup();
  if (from_manual || to_manual) {
    // A replicated value is whole on every device, which is what a manual
    // region that uses it sees.
    if (to_manual && value.sharding.IsReplicated() && target.IsManual()) {
      return PartitionedValue{value.name, value.global, target};
    }
    return UnimplementedError(StrCat("resharding ", value.global.ToString(), " from ", value.sharding.ToString(),
                                     " to ", target.ToString()));
  }
  PartitionedValue v = value;
  if (v.sharding.IsMaximal()) v = BroadcastFrom(b, v, v.sharding.maximal_device());
  if (target.IsMaximal()) {
    // Every device computes it; the owner's copy is the value.
    KILN_ASSIGN_OR_RETURN(PartitionedValue whole, Reshard(b, v, hlo::HloSharding::Replicate()));
    return PartitionedValue{whole.name, whole.global, target};
  }
  for (int64_t dim : DimsToGather(v.global, v.sharding, target, n)) {
    KILN_ASSIGN_OR_RETURN(v, GatherDim(b, v, dim));
  }
  if (SameLayout(v.global, v.sharding, target, n)) return PartitionedValue{v.name, v.global, target};
  return SliceTo(b, v, target);
}

int64_t ReshardBytes(const hlo::Shape& global, const hlo::HloSharding& from, const hlo::HloSharding& to, int64_t num_devices) {
  if (!global.IsArray() || SameLayout(global, from, to, num_devices)) return 0;
  int64_t element = std::max(1, hlo::HostByteWidth(global.element_type()));
  if (from.IsMaximal()) return global.ElementCount() * element;
  if (!from.IsTiled()) return 0;
  std::vector<int64_t> gather = DimsToGather(global, from, to, num_devices);
  if (gather.empty()) return 0;
  // After gathering, a device holds its shard with those dims whole.
  std::vector<int64_t> counts = from.TileCounts(global.rank());
  int64_t bytes = element;
  for (int64_t i = 0; i < global.rank(); ++i) {
    bool whole = std::find(gather.begin(), gather.end(), i) != gather.end();
    bytes *= whole ? global.dimensions(i) : hlo::ShardSize(global.dimensions(i), counts[i]);
  }
  return bytes;
}

PartitionedValue MaskPadding(ComputationTextBuilder& b, const PartitionedValue& value,
                             const std::vector<int64_t>& dims, const std::string& fill) {
  if (!value.sharding.IsTiled()) return value;
  int64_t n = b.num_devices();
  Shape local = value.Local();
  std::vector<int64_t> counts = value.sharding.TileCounts(value.global.rank());
  Shape pred_shape(PrimitiveType::kPred, local.dimensions());
  Shape index_shape(PrimitiveType::kS32, local.dimensions());
  std::string mask;
  for (int64_t dim : dims) {
    int64_t size = value.global.dimensions(dim);
    if (counts[dim] == 1 || size % counts[dim] == 0) continue;
    std::vector<int64_t> offsets(n);
    for (int64_t d = 0; d < n; ++d) offsets[d] = hlo::DeviceShardExtent(value.global, value.sharding, d).offset[dim];
    std::string iota = b.Add("index", index_shape, StrCat("iota(), iota_dimension=", dim));
    std::string start = b.Add("start", index_shape, StrCat("broadcast(%", b.PerDeviceValue(offsets), "), dimensions={}"));
    std::string global_index = b.Add("index", index_shape, StrCat("add(%", iota, ", %", start, ")"));
    std::string limit = b.Add("limit", index_shape,
                              StrCat("broadcast(%", b.ScalarConstant(PrimitiveType::kS32, std::to_string(size)),
                                     "), dimensions={}"));
    std::string in_range =
        b.Add("in-range", pred_shape, StrCat("compare(%", global_index, ", %", limit, "), direction=LT"));
    mask = mask.empty() ? in_range : b.Add("in-range", pred_shape, StrCat("and(%", mask, ", %", in_range, ")"));
  }
  if (mask.empty()) return value;
  std::string filler = b.Add("fill", local, StrCat("broadcast(%", fill, "), dimensions={}"));
  std::string masked =
      b.Add(value.name + ".masked", local, StrCat("select(%", mask, ", %", value.name, ", %", filler, ")"));
  return PartitionedValue{masked, value.global, value.sharding};
}

}  // namespace kiln::spmd
