// The partitioner's rule for dot.
//
// A local dot is right when both operands are cut the same way along each
// batch and contracting dimension pair and every combination of tiles is
// held somewhere. Four layouts of the operands are weighed: as they are;
// the rhs cut to match the lhs (or the other way round), whose free
// dimensions are then whole; and both cut as the result is, contracting
// dimensions whole. The cheapest (bytes resharded, partial sums reduced,
// result resharded) wins. Contracting dimensions that are cut leave partial
// sums, combined with a reduce-scatter when the result's layout is exactly
// the scattered one, else an all-reduce.

#include "base/str_cat.h"
#include "compiler/spmd/computation_partitioner.h"
#include "compiler/spmd/op_dims.h"
#include "compiler/spmd/tile_map.h"

namespace kiln::spmd {
namespace {

struct DotPlan {
  hlo::HloSharding lhs;
  hlo::HloSharding rhs;
  hlo::HloSharding result;  // of the local dots, partial sums combined
  TileMap combined;    // per device: result dims, then contracting dims
  std::vector<int64_t> tiled_contracting;  // positions in `combined`
  int64_t cost = 0;
};

// The plan for operands laid out as `l` and `r`, when a local dot works.
std::optional<DotPlan> PlanFor(const DotDims& dims, const TileMap& l, const TileMap& r) {
  int64_t rank = static_cast<int64_t>(dims.result_lhs.size());
  int64_t devices = l.devices();
  TileMap combined;
  for (int64_t j = 0; j < rank; ++j) {
    combined.counts.push_back(dims.result_lhs[j] >= 0 ? l.counts[dims.result_lhs[j]] : r.counts[dims.result_rhs[j]]);
  }
  for (int64_t lc : dims.lhs_contracting) combined.counts.push_back(l.counts[lc]);
  auto same = [&](int64_t ld, int64_t rd) {
    if (l.counts[ld] != r.counts[rd]) return false;
    for (int64_t d = 0; d < devices; ++d) {
      if (l.index[d][ld] != r.index[d][rd]) return false;
    }
    return true;
  };
  for (int64_t j = 0; j < rank; ++j) {
    if (dims.result_lhs[j] >= 0 && dims.result_rhs[j] >= 0 && !same(dims.result_lhs[j], dims.result_rhs[j])) {
      return std::nullopt;
    }
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    if (!same(dims.lhs_contracting[i], dims.rhs_contracting[i])) return std::nullopt;
  }
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<int64_t> index;
    for (int64_t j = 0; j < rank; ++j) {
      index.push_back(dims.result_lhs[j] >= 0 ? l.index[d][dims.result_lhs[j]] : r.index[d][dims.result_rhs[j]]);
    }
    for (int64_t lc : dims.lhs_contracting) index.push_back(l.index[d][lc]);
    combined.index.push_back(std::move(index));
  }
  // Every combination of tiles, contracting ones included, must be held.
  Result<hlo::HloSharding> lhs = ToSharding(l);
  Result<hlo::HloSharding> rhs = ToSharding(r);
  std::vector<int64_t> result_dims(rank);
  for (int64_t j = 0; j < rank; ++j) result_dims[j] = j;
  Result<hlo::HloSharding> result = ToSharding(Remap(combined, result_dims));
  if (!lhs || !rhs || !result || !ToSharding(combined)) return std::nullopt;
  DotPlan plan{*lhs, *rhs, *result, combined, {}, 0};
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    if (combined.counts[rank + i] > 1) plan.tiled_contracting.push_back(rank + static_cast<int64_t>(i));
  }
  return plan;
}

// Groups reordered for a reduce-scatter of the partial sums along one
// dimension that lands them laid out as `target`; nullopt when none does.
std::optional<std::pair<int64_t, std::vector<std::vector<int64_t>>>> ScatterFor(
    const DotPlan& plan, const std::vector<std::vector<int64_t>>& groups, const TileMap& target,
    const hlo::Shape& global) {
  int64_t rank = global.rank();
  int64_t group_size = static_cast<int64_t>(groups[0].size());
  for (int64_t s = 0; s < rank; ++s) {
    if (target.counts[s] != group_size || plan.combined.counts[s] != 1 || global.dimensions(s) % group_size != 0) {
      continue;
    }
    bool others_agree = true;
    for (int64_t j = 0; j < rank && others_agree; ++j) {
      if (j == s) continue;
      others_agree = target.counts[j] == plan.combined.counts[j];
      for (int64_t d = 0; d < target.devices() && others_agree; ++d) {
        others_agree = target.index[d][j] == plan.combined.index[d][j];
      }
    }
    if (!others_agree) continue;
    std::vector<std::vector<int64_t>> ordered;
    bool permutes = true;
    for (const auto& group : groups) {
      std::vector<int64_t> by_tile(group_size, -1);
      for (int64_t d : group) {
        int64_t t = target.index[d][s];
        if (by_tile[t] != -1) permutes = false;
        by_tile[t] = d;
      }
      ordered.push_back(std::move(by_tile));
    }
    if (permutes) return std::make_pair(s, std::move(ordered));
  }
  return std::nullopt;
}

}  // namespace

Result<PartitionedValue> ComputationPartitioner::Dot(const Instruction& instr, const hlo::HloSharding& target) {
  KILN_ASSIGN_OR_RETURN(DotDims dims, DotDimsOf(instr));
  const PartitionedValue& lhs = ValueOf(instr.operand(0));
  const PartitionedValue& rhs = ValueOf(instr.operand(1));
  if (lhs.sharding.HasManualSubgroup() || rhs.sharding.HasManualSubgroup() || target.HasManualSubgroup()) {
    return Whole(instr, target);
  }
  int64_t n = b_.num_devices();
  const hlo::Shape& global = instr.shape();
  TileMap l = TileMapOf(lhs.sharding, dims.lhs_rank, n);
  TileMap r = TileMapOf(rhs.sharding, dims.rhs_rank, n);
  TileMap t = TileMapOf(target, global.rank(), n);
  // Each operand's batch and contracting dimensions from the other's.
  std::vector<int64_t> rhs_from_lhs(dims.rhs_rank, -1);
  std::vector<int64_t> lhs_from_rhs(dims.lhs_rank, -1);
  for (size_t j = 0; j < dims.result_lhs.size(); ++j) {
    if (dims.result_lhs[j] >= 0 && dims.result_rhs[j] >= 0) {
      rhs_from_lhs[dims.result_rhs[j]] = dims.result_lhs[j];
      lhs_from_rhs[dims.result_lhs[j]] = dims.result_rhs[j];
    }
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    rhs_from_lhs[dims.rhs_contracting[i]] = dims.lhs_contracting[i];
    lhs_from_rhs[dims.lhs_contracting[i]] = dims.rhs_contracting[i];
  }
  std::vector<std::pair<TileMap, TileMap>> candidates = {
      {l, r},
      {l, Remap(l, rhs_from_lhs)},
      {Remap(r, lhs_from_rhs), r},
      {Remap(t, dims.LhsFromResult()), Remap(t, dims.RhsFromResult())},
  };
  std::optional<DotPlan> best;
  for (const auto& [cl, cr] : candidates) {
    std::optional<DotPlan> plan = PlanFor(dims, cl, cr);
    if (!plan) continue;
    plan->cost = ReshardBytes(lhs.global, lhs.sharding, plan->lhs, n) +
                 ReshardBytes(rhs.global, rhs.sharding, plan->rhs, n) +
                 ReshardBytes(global, plan->result, target, n);
    if (!plan->tiled_contracting.empty()) {
      plan->cost += hlo::ShardShape(global, plan->result).ElementCount() * hlo::HostByteWidth(global.element_type());
    }
    if (!best || plan->cost < best->cost) best = std::move(plan);
  }
  if (!best) return Whole(instr, target);

  KILN_ASSIGN_OR_RETURN(PartitionedValue lv, Operand(instr, 0, best->lhs));
  KILN_ASSIGN_OR_RETURN(PartitionedValue rv, Operand(instr, 1, best->rhs));
  if (!best->tiled_contracting.empty()) {
    // Padding of uneven contracting shards must add nothing.
    lv = MaskPadding(b_, lv, dims.lhs_contracting,
                     b_.ScalarConstant(lv.global.element_type(), "0"));
    rv = MaskPadding(b_, rv, dims.rhs_contracting,
                     b_.ScalarConstant(rv.global.element_type(), "0"));
  }
  hlo::Shape local = hlo::ShardShape(global, best->result);
  if (best->tiled_contracting.empty()) {
    std::string name = EmitLike(instr, local, {lv.name, rv.name});
    return Reshard(b_, PartitionedValue{name, global, best->result}, target);
  }
  // Partial sums of narrow floats are produced and combined in f32 and
  // rounded once, as the whole dot rounds once.
  hlo::PrimitiveType type = global.element_type();
  bool widen = hlo::IsFloatingPoint(type) && hlo::BitWidth(type) < 32;
  hlo::PrimitiveType sum_type = widen ? hlo::PrimitiveType::kF32 : type;
  hlo::Shape partial_local = local;
  partial_local.set_element_type(sum_type);
  std::string name = EmitLike(instr, partial_local, {lv.name, rv.name});
  KILN_ASSIGN_OR_RETURN(auto groups, VaryingGroups(best->combined, best->tiled_contracting));
  std::string reducer = SumReducer(session_.module(), sum_type);
  auto narrowed = [&](const std::string& wide, hlo::Shape shape) {
    if (!widen) return wide;
    shape.set_element_type(type);
    return b_.Add(std::string(instr.name()) + ".rounded", shape, StrCat("convert(%", wide, ")"));
  };
  if (target.IsTiled()) {
    if (auto scatter = ScatterFor(*best, groups, t, global)) {
      auto& [dim, ordered] = *scatter;
      hlo::Shape scattered_shape = hlo::ShardShape(global, target);
      scattered_shape.set_element_type(sum_type);
      std::string scattered =
          b_.Add(name + ".reduce-scatter", scattered_shape,
                 StrCat("reduce-scatter(%", name, "), channel_id=", session_.module().NextChannelId(),
                        ", replica_groups=", ReplicaGroupsText(ordered), ", dimensions={", dim,
                        "}, use_global_device_ids=true, to_apply=%", reducer));
      return PartitionedValue{narrowed(scattered, scattered_shape), global, target};
    }
  }
  name = narrowed(EmitAllReduce(b_, name, partial_local, groups, reducer), partial_local);
  return Reshard(b_, PartitionedValue{name, global, best->result}, target);
}

}  // namespace kiln::spmd
