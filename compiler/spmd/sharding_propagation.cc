#include "compiler/spmd/sharding_propagation.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "compiler/hlo/op_attributes.h"
#include "compiler/spmd/op_dims.h"
#include "compiler/spmd/tile_map.h"

namespace kiln::spmd {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool Informative(const hlo::HloSharding& s) { return !s.IsReplicated(); }

// The root sharding each loop body gave each state it was propagated with,
// shared by the nested propagations of one outermost PropagateShardings
// call: a body is propagated once per state, however deeply loops nest and
// however many rounds each takes (without it, loops nested d deep cost
// about d^4 body propagations).
using BodyRoots = std::map<std::pair<const hlo::Computation*, std::string>, hlo::HloSharding>;
thread_local BodyRoots* active_body_roots = nullptr;

int64_t TileProduct(const hlo::HloSharding& s) {
  int64_t n = 1;
  if (s.IsTiled()) {
    for (int64_t i = 0; i < s.data_rank(); ++i) n *= s.tile_dims()[i];
  }
  return n;
}

class Propagator {
 public:
  Propagator(const hlo::Computation& computation, int64_t num_devices)
      : computation_(computation), num_devices_(num_devices) {}

  Result<ShardingMap> Run(const std::vector<hlo::HloSharding>& parameter_shardings);

 private:
  const hlo::HloSharding* Of(const Instruction* instr) const {
    auto it = map_.find(instr);
    return it == map_.end() ? nullptr : &it->second;
  }
  // The sharding of `target_rank` values whose dimension j takes the tiles
  // of `source`'s dimension from[j]; nullopt when that has no sharding.
  std::optional<hlo::HloSharding> Mapped(const hlo::HloSharding& source, int64_t source_rank,
                                    const std::vector<int64_t>& from) const {
    if (!source.IsTiled()) return std::nullopt;
    Result<hlo::HloSharding> s = ToSharding(Remap(TileMapOf(source, source_rank, num_devices_), from));
    if (!s) return std::nullopt;
    return *s;
  }
    // `settle`: nothing else will be learned; take second choices (a dot laid
  // out by one operand when both cannot combine).
  Result<std::optional<hlo::HloSharding>> Forward(const Instruction& instr, bool settle) const;
  // A while's state laid out as `init` is, except that an element `init`
  // leaves untiled takes the tiles its body gives it (a scan's stacked
  // residuals are written tiled like the activations written into them, so
  // the loop keeps them tiled instead of gathering every update).
  Result<hlo::HloSharding> WhileState(const Instruction& loop, const hlo::HloSharding& init) const;
  std::optional<hlo::HloSharding> Backward(const Instruction& instr) const;
  // After `loop` is decided: an init tuple made only for it, and the
  // broadcasts made only for that tuple, take the loop's tiles where they
  // were left replicated, so each device builds its part of a stacked
  // buffer instead of the whole one and a slice of it.
  void PushIntoInit(const Instruction& loop);
  // Records `instr`'s sharding; false when it had one.
  bool Decide(const Instruction& instr, hlo::HloSharding sharding);
  std::optional<hlo::HloSharding> FromUser(const Instruction& instr, const Instruction& user) const;

  const hlo::Computation& computation_;
  int64_t num_devices_;
  ShardingMap map_;
};

Result<std::optional<hlo::HloSharding>> Propagator::Forward(const Instruction& instr, bool settle) const {
  using Out = std::optional<hlo::HloSharding>;
  Opcode opcode = instr.opcode();
  // Ops that pass values through whole keep each one's sharding.
  bool passes_through = opcode == Opcode::kTuple || opcode == Opcode::kGetTupleElement ||
                        opcode == Opcode::kWhile || opcode == Opcode::kCall ||
                        opcode == Opcode::kOptimizationBarrier;
  std::vector<const hlo::HloSharding*> ops;
  bool all_known = true;
  for (const Instruction* op : instr.operands()) {
    ops.push_back(Of(op));
    all_known &= ops.back() != nullptr;
    if (!passes_through && ops.back() != nullptr && ops.back()->IsManual()) return Out(hlo::HloSharding::Manual());
  }
  const hlo::HloSharding* op0 = ops.empty() ? nullptr : ops[0];
  int64_t rank = instr.shape().rank();
  if (hlo::IsElementwise(opcode) || opcode == Opcode::kConcatenate) {
    const hlo::HloSharding* best = nullptr;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i] == nullptr || instr.operand(i)->shape().rank() != rank) continue;
      if (ops[i]->IsTiled() && (best == nullptr || TileProduct(*ops[i]) > TileProduct(*best))) best = ops[i];
    }
    if (best == nullptr) return Out();
    if (opcode != Opcode::kConcatenate) return Out(*best);
    std::optional<std::vector<int64_t>> whole = WholeDims(instr);
    return whole ? Mapped(*best, rank, *whole) : Out();
  }
  switch (opcode) {
    case Opcode::kGetTupleElement: {
      if (op0 == nullptr) return Out();
      KILN_ASSIGN_OR_RETURN(int64_t index, hlo::GetTupleIndex(instr));
      return Out(op0->TupleElement(instr.operand(0)->shape(), index));
    }
    case Opcode::kTuple: {
      if (!all_known) return Out();
      std::vector<hlo::HloSharding> leaves;
      for (size_t i = 0; i < ops.size(); ++i) {
        for (hlo::HloSharding& leaf : ops[i]->LeafShardings(instr.operand(i)->shape())) leaves.push_back(std::move(leaf));
      }
      return Out(hlo::HloSharding::Tuple(std::move(leaves)));
    }
    case Opcode::kWhile: {
      if (op0 == nullptr) return Out();
      KILN_ASSIGN_OR_RETURN(hlo::HloSharding state, WhileState(instr, *op0));
      return Out(std::move(state));
    }
    case Opcode::kOptimizationBarrier:
      return op0 != nullptr ? Out(*op0) : Out();
    case Opcode::kDynamicUpdateSlice: {
      // An untiled buffer written with a tiled update that covers the tiled
      // dimensions whole is tiled like the update (each device writes its
      // part); a buffer still undecided may yet say more.
      if (op0 == nullptr || op0->IsTiled() || ops.size() < 2 || ops[1] == nullptr || !ops[1]->IsTiled()) break;
      const hlo::Shape& update = instr.operand(1)->shape();
      if (update.rank() != rank) return Out();
      std::vector<int64_t> counts = ops[1]->TileCounts(rank);
      for (int64_t j = 0; j < rank; ++j) {
        if (counts[j] > 1 && update.dimensions(j) != instr.shape().dimensions(j)) return Out();
      }
      return Out(*ops[1]);
    }
    case Opcode::kGather: {
      // Gathered where the indices lie when the table is whole.
      if (ops.size() < 2 || ops[1] == nullptr || !ops[1]->IsTiled()) break;
      if (op0 == nullptr ? !settle : op0->IsTiled()) return Out();
      std::optional<std::vector<int64_t>> from = GatherBatchSource(instr);
      return from ? Mapped(*ops[1], instr.operand(1)->shape().rank(), *from) : Out();
    }
    case Opcode::kCall: {
      if (!all_known || instr.called_computations().size() != 1) return Out();
      std::vector<hlo::HloSharding> params;
      for (const hlo::HloSharding* s : ops) params.push_back(*s);
      const hlo::Computation& callee = *instr.called_computations()[0];
      KILN_ASSIGN_OR_RETURN(ShardingMap inner, PropagateShardings(callee, params, num_devices_));
      return Out(inner.at(callee.root()));
    }
    default:
      break;
  }
  if (op0 == nullptr || !op0->IsTiled() || rank < 0) return Out();
  int64_t op_rank = instr.operand(0)->shape().rank();
  switch (opcode) {
    case Opcode::kBroadcast: {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::GetDimensions(instr));
      std::vector<int64_t> from(rank, -1);
      for (size_t i = 0; i < dims.size(); ++i) from[dims[i]] = static_cast<int64_t>(i);
      return Mapped(*op0, op_rank, from);
    }
    case Opcode::kTranspose: {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, hlo::GetDimensions(instr));
      return Mapped(*op0, op_rank, perm);
    }
    case Opcode::kReshape: {
      auto from = ReshapeTileSource(instr.operand(0)->shape(), instr.shape(), op0->TileCounts(op_rank));
      return from ? Mapped(*op0, op_rank, *from) : Out();
    }
    case Opcode::kReduce: {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reduced, hlo::GetDimensions(instr));
      std::vector<int64_t> from;
      for (int64_t i = 0; i < op_rank; ++i) {
        if (std::find(reduced.begin(), reduced.end(), i) == reduced.end()) from.push_back(i);
      }
      Out kept = Mapped(*op0, op_rank, from);
      if (!kept || !instr.shape().IsTuple()) return kept;
      return Out(hlo::HloSharding::Tuple(std::vector<hlo::HloSharding>(instr.shape().tuple_shapes().size(), *kept)));
    }
    case Opcode::kDynamicUpdateSlice:
      return Out(*op0);
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kDynamicSlice: {
      std::optional<std::vector<int64_t>> whole = WholeDims(instr);
      return whole ? Mapped(*op0, op_rank, *whole) : Out();
    }
    case Opcode::kDot: {
      KILN_ASSIGN_OR_RETURN(DotDims dims, DotDimsOf(instr));
      const hlo::HloSharding* rhs = ops[1];
      TileMap lhs_map = TileMapOf(*op0, dims.lhs_rank, num_devices_);
      TileMap from_lhs = Remap(lhs_map, dims.result_lhs);
      if (rhs != nullptr && rhs->IsTiled()) {
        // Both operands' free tiles together, when they form a tiling.
        TileMap rhs_map = TileMapOf(*rhs, dims.rhs_rank, num_devices_);
        TileMap both = from_lhs;
        TileMap from_rhs = Remap(rhs_map, dims.result_rhs);
        for (int64_t j = 0; j < rank; ++j) {
          if (dims.result_lhs[j] >= 0) continue;
          both.counts[j] = from_rhs.counts[j];
          for (int64_t d = 0; d < num_devices_; ++d) both.index[d][j] = from_rhs.index[d][j];
        }
        if (Result<hlo::HloSharding> s = ToSharding(both); s && Informative(*s)) return Out(*s);
      }
      if (!settle) return Out();  // the users may know better
      if (Result<hlo::HloSharding> s = ToSharding(from_lhs); s && Informative(*s)) return Out(*s);
      return Out();
    }
    default:
      return Out();
  }
}

Result<hlo::HloSharding> Propagator::WhileState(const Instruction& loop, const hlo::HloSharding& init) const {
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* body, hlo::GetCalledComputation(loop, "body"));
  const hlo::Shape& shape = loop.shape();
  if (!shape.IsTuple() || body->root() == nullptr) return init;
  hlo::HloSharding state = init;
  // Each round can only tile more elements, so this ends; a few rounds
  // reach what chains of elements carry.
  for (int round = 0; round < 4; ++round) {
    std::pair<const hlo::Computation*, std::string> key(body, state.ToString());
    auto known = active_body_roots->find(key);
    if (known == active_body_roots->end()) {
      KILN_ASSIGN_OR_RETURN(ShardingMap inner, PropagateShardings(*body, {state}, num_devices_));
      auto root = inner.find(body->root());
      if (root == inner.end()) return state;
      known = active_body_roots->emplace(std::move(key), root->second).first;
    }
    std::vector<hlo::HloSharding> leaves = state.LeafShardings(shape);
    std::vector<hlo::HloSharding> produced = known->second.LeafShardings(shape);
    if (produced.size() != leaves.size()) return state;
    bool changed = false;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].IsReplicated() && produced[i].IsTiled()) {
        leaves[i] = produced[i];
        changed = true;
      }
    }
    if (!changed) return state;
    state = hlo::HloSharding::Tuple(std::move(leaves));
  }
  return state;
}

std::optional<hlo::HloSharding> Propagator::FromUser(const Instruction& instr, const Instruction& user) const {
  const hlo::HloSharding* us = Of(&user);
  if (us == nullptr) return std::nullopt;
  if (us->IsManual()) return hlo::HloSharding::Manual();
  int64_t rank = instr.shape().rank();
  int64_t user_rank = user.shape().rank();
  bool is_operand0 = user.operand_count() > 0 && user.operand(0) == &instr;
  if (hlo::IsElementwise(user.opcode())) {
    return user_rank == rank && us->IsTiled() ? std::optional<hlo::HloSharding>(*us) : std::nullopt;
  }
  switch (user.opcode()) {
    case Opcode::kTuple: {
      for (int64_t i = 0; i < user.operand_count(); ++i) {
        if (user.operand(i) == &instr) return us->TupleElement(user.shape(), i);
      }
      return std::nullopt;
    }
    case Opcode::kWhile:
    case Opcode::kOptimizationBarrier:
      return *us;
    case Opcode::kGetTupleElement:
      // Taking the only element of a tuple says how the whole is laid out.
      if (instr.shape().IsTuple() && instr.shape().tuple_shapes().size() == 1 &&
          !instr.shape().tuple_shapes(0).IsTuple()) {
        return hlo::HloSharding::Tuple({*us});
      }
      return std::nullopt;
    case Opcode::kCustomCall: {
      // A Sharding custom call says how its operand should be laid out.
      auto target = hlo::GetStringAttribute(user, "custom_call_target");
      return target && *target == "Sharding" ? std::optional<hlo::HloSharding>(*us) : std::nullopt;
    }
    case Opcode::kDynamicUpdateSlice:
      return is_operand0 ? std::optional<hlo::HloSharding>(*us) : std::nullopt;
    case Opcode::kBroadcast: {
      auto dims = hlo::GetDimensions(user);
      return dims ? Mapped(*us, user_rank, *dims) : std::nullopt;
    }
    case Opcode::kTranspose: {
      auto perm = hlo::GetDimensions(user);
      if (!perm) return std::nullopt;
      std::vector<int64_t> from(rank, -1);
      for (size_t j = 0; j < perm->size(); ++j) from[(*perm)[j]] = static_cast<int64_t>(j);
      return Mapped(*us, user_rank, from);
    }
    case Opcode::kReshape: {
      auto from = ReshapeTileSource(user.shape(), instr.shape(), us->TileCounts(user_rank));
      return from ? Mapped(*us, user_rank, *from) : std::nullopt;
    }
    case Opcode::kReduce: {
      auto reduced = hlo::GetDimensions(user);
      if (!reduced || user.shape().IsTuple() || instr.shape().rank() != user_rank + (int64_t)reduced->size()) {
        return std::nullopt;
      }
      std::vector<int64_t> from(rank, -1);
      int64_t next = 0;
      for (int64_t i = 0; i < rank; ++i) {
        if (std::find(reduced->begin(), reduced->end(), i) == reduced->end()) from[i] = next++;
      }
      return Mapped(*us, user_rank, from);
    }
    case Opcode::kDot: {
      auto dims = DotDimsOf(user);
      if (!dims) return std::nullopt;
      return Mapped(*us, user_rank, is_operand0 ? dims->LhsFromResult() : dims->RhsFromResult());
    }
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kDynamicSlice:
    case Opcode::kConcatenate: {
      if (!is_operand0 && user.opcode() != Opcode::kConcatenate) return std::nullopt;
      std::optional<std::vector<int64_t>> whole = WholeDims(user);
      if (!whole) return std::nullopt;
      // Only whole dimensions have the same size in both.
      return Mapped(*us, user_rank, *whole);
    }
    default:
      return std::nullopt;
  }
}

std::optional<hlo::HloSharding> Propagator::Backward(const Instruction& instr) const {
  std::optional<hlo::HloSharding> fallback;
  for (const Instruction* user : instr.users()) {
    std::optional<hlo::HloSharding> s = FromUser(instr, *user);
    if (!s) continue;
    if (Informative(*s)) return s;
    if (!fallback && (user->opcode() == Opcode::kTuple || user->opcode() == Opcode::kWhile)) fallback = s;
  }
  return fallback;
}

void Propagator::PushIntoInit(const Instruction& loop) {
  const hlo::HloSharding* state = Of(&loop);
  const Instruction* init = loop.operand_count() == 1 ? loop.operand(0) : nullptr;
  if (state == nullptr || init == nullptr || init->opcode() != Opcode::kTuple || init->users().size() != 1 ||
      init->FindAttribute("sharding") != nullptr || Of(init) == nullptr) {
    return;
  }
  for (const Instruction* op : init->operands()) {
    if (!op->shape().IsArray()) return;  // one leaf per operand below
  }
  std::vector<hlo::HloSharding> leaves = Of(init)->LeafShardings(init->shape());
  std::vector<hlo::HloSharding> wanted = state->LeafShardings(loop.shape());
  if (leaves.size() != wanted.size() || static_cast<int64_t>(leaves.size()) != init->operand_count()) return;
  bool changed = false;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Instruction* op = init->operand(static_cast<int64_t>(i));
    if (!leaves[i].IsReplicated() || !wanted[i].IsTiled() || op->opcode() != Opcode::kBroadcast ||
        op->users().size() != 1 || op->FindAttribute("sharding") != nullptr) {
      continue;
    }
    map_.insert_or_assign(op, wanted[i]);
    leaves[i] = wanted[i];
    changed = true;
  }
  if (changed) map_.insert_or_assign(init, hlo::HloSharding::Tuple(std::move(leaves)));
}

bool Propagator::Decide(const Instruction& instr, hlo::HloSharding sharding) {
  if (!map_.emplace(&instr, std::move(sharding)).second) return false;
  if (instr.opcode() == Opcode::kWhile) PushIntoInit(instr);
  return true;
}

Result<ShardingMap> Propagator::Run(const std::vector<hlo::HloSharding>& parameter_shardings) {
  const auto& instructions = computation_.instructions();
  // The body of a shard_map (its parameters manual, none tiled) is manual
  // throughout.
  bool manual_parameter = false;
  bool tiled_parameter = false;
  for (const hlo::HloSharding& p : parameter_shardings) {
    for (const hlo::HloSharding& leaf : p.tuple_elements().empty() ? std::vector<hlo::HloSharding>{p} : p.tuple_elements()) {
      manual_parameter |= leaf.IsManual();
      tiled_parameter |= leaf.IsTiled();
    }
  }
  hlo::HloSharding fallback =
      manual_parameter && !tiled_parameter ? hlo::HloSharding::Manual() : hlo::HloSharding::Replicate();
  for (const auto& instr : instructions) {
    KILN_ASSIGN_OR_RETURN(std::optional<hlo::HloSharding> annotated, hlo::InstructionSharding(*instr, num_devices_));
    int64_t number = instr->parameter_number();
    if (number >= 0 && number < static_cast<int64_t>(parameter_shardings.size())) {
      map_.emplace(instr.get(), parameter_shardings[number]);
    } else if (annotated) {
      map_.emplace(instr.get(), std::move(*annotated));
    } else if (number >= 0) {
      map_.emplace(instr.get(), hlo::HloSharding::Replicate());
    }
  }
  while (map_.size() < instructions.size()) {
    bool changed = false;
    for (const auto& instr : instructions) {
      if (map_.contains(instr.get())) continue;
      KILN_ASSIGN_OR_RETURN(std::optional<hlo::HloSharding> s, Forward(*instr, false));
      if (s) changed |= Decide(*instr, std::move(*s));
    }
    for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
      if (map_.contains(it->get())) continue;
      if (std::optional<hlo::HloSharding> s = Backward(**it)) changed |= Decide(**it, std::move(*s));
    }
    if (changed) continue;
    // Nothing more to learn: what has all its operands decided is replicated
    // (manual in a shard_map body; for tuples and calls, what its operands
    // make it).
    for (const auto& instr : instructions) {
      if (map_.contains(instr.get())) continue;
      bool ready = true;
      for (const Instruction* op : instr->operands()) ready &= map_.contains(op);
      if (!ready) continue;
      KILN_ASSIGN_OR_RETURN(std::optional<hlo::HloSharding> s, Forward(*instr, true));
      Decide(*instr, s.value_or(fallback));
    }
  }
  return std::move(map_);
}

}  // namespace

Result<ShardingMap> PropagateShardings(const hlo::Computation& computation,
                                       const std::vector<hlo::HloSharding>& parameter_shardings, int64_t num_devices) {
  // The outermost call owns the memo of loop bodies; nested calls share it.
  BodyRoots roots;
  BodyRoots* const outer = active_body_roots;
  if (outer == nullptr) active_body_roots = &roots;
  Propagator propagator(computation, num_devices);
  Result<ShardingMap> result = propagator.Run(parameter_shardings);
  active_body_roots = outer;
  return result;
}

}  // namespace kiln::spmd
