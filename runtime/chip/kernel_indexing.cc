#include "runtime/chip/kernel_indexing.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <numeric>
#include <unordered_map>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/op_attributes.h"
#include "runtime/chip/index_regroup.h"
#include "runtime/chip/kernel_edges.h"

namespace kiln::runtime {
namespace {

using kernel_edges::ArrayOf;
using kernel_edges::BoundaryKey;
using kernel_edges::Edge;
using kernel_edges::EdgesOf;
using kernel_edges::KeepsDimensions;
using kernel_edges::Key;
using kernel_edges::Others;
using kernel_edges::Product;
using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

class Propagator {
 public:
  Propagator(std::span<const Instruction* const> inputs, std::span<const Instruction* const> outputs) {
    nodes_.reserve(4 * (inputs.size() + outputs.size()));
    for (const Instruction* in : inputs) nodes_[in].member = false;
    std::vector<const Instruction*> stack(outputs.begin(), outputs.end());
    while (!stack.empty()) {
      const Instruction* instr = stack.back();
      stack.pop_back();
      Node& node = nodes_[instr];
      if (!node.member || node.walked) continue;
      node.walked = true;
      AddUses(instr);
      for (const Instruction* operand : instr->operands()) stack.push_back(operand);
      if (instr->opcode() == Opcode::kFusion || instr->opcode() == Opcode::kCall) AddCallee(instr);
    }
  }

  void Seed(const Key& key, const ArrayIndex& index) { Merge(key, index); }

  void Run() {
    // Each run of Visit learns at least one dimension, so the walk ends.
    while (!queue_.empty()) {
      Key key = queue_.front();
      queue_.pop_front();
      Visit(key);
    }
  }

  ArrayIndex Get(const Key& key) const {
    auto it = nodes_.find(key.instr);
    if (it != nodes_.end() && Slot(key) < it->second.values.size()) return it->second.values[Slot(key)];
    return Fresh(key);
  }

 private:
  // An instruction of the kernel (member) or one it reads (an input): its
  // uses inside the kernel and what is known of its value(s), one slot for
  // an array and one per element of a tuple, made all at once so that
  // references to them stay valid.
  struct Node {
    bool member = true;   // false for inputs
    bool walked = false;  // its operands are recorded
    std::vector<const Instruction*> uses;
    std::vector<ArrayIndex> values;
  };

  static size_t Slot(const Key& key) { return static_cast<size_t>(key.leaf + 1); }

  void AddCallee(const Instruction* caller) {
    for (const Computation* callee : caller->called_computations()) {
      if (!caller_.emplace(callee, caller).second) continue;
      for (const auto& instr : callee->instructions()) {
        Node& node = nodes_[instr.get()];
        if (!node.walked) {
          node.walked = true;
          AddUses(instr.get());
        }
        if (instr->opcode() == Opcode::kFusion || instr->opcode() == Opcode::kCall) AddCallee(instr.get());
      }
    }
  }

  // Records `member` as a user of its operands: the walk follows only the
  // kernel's own uses (an input may have thousands elsewhere).
  void AddUses(const Instruction* member) {
    for (const Instruction* operand : member->operands()) {
      std::vector<const Instruction*>& users = nodes_[operand].uses;
      if (users.empty() || users.back() != member) users.push_back(member);
    }
  }

  bool Inside(const Instruction* instr) const {
    auto it = nodes_.find(instr);
    return it != nodes_.end() && it->second.member;
  }

  // Unknown dimensions, except that size-1 dimensions need no parts.
  static ArrayIndex Fresh(const Key& key) {
    const Shape* shape = ArrayOf(key);
    ArrayIndex index(shape != nullptr ? shape->rank() : 0);
    for (size_t d = 0; d < index.size(); ++d) index[d].known = shape->dimensions(d) <= 1;
    return index;
  }

  // What is known of `key`, or nullptr when it is not the kernel's.
  ArrayIndex* Entry(const Key& key) {
    if (key.instr == nullptr) return nullptr;
    auto it = nodes_.find(key.instr);
    if (it == nodes_.end()) return nullptr;
    std::vector<ArrayIndex>& values = it->second.values;
    if (values.empty()) {
      const Shape& shape = key.instr->shape();
      const size_t slots = 1 + (shape.IsTuple() ? shape.tuple_shapes().size() : 0);
      values.reserve(slots);
      for (size_t s = 0; s < slots; ++s) values.push_back(Fresh(Key{key.instr, static_cast<int64_t>(s) - 1}));
    }
    return Slot(key) < values.size() ? &values[Slot(key)] : nullptr;
  }

  // Learns the dimensions `proposal` knows and `key` does not. `proposal`
  // may be another key's entry (entries stay put as the walk goes on).
  void Merge(const Key& key, const ArrayIndex& proposal) {
    ArrayIndex* entry = Entry(key);
    if (entry == nullptr || ArrayOf(key) == nullptr) return;
    ArrayIndex& current = *entry;
    if (proposal.size() != current.size()) return;
    bool changed = false;
    for (size_t d = 0; d < current.size(); ++d) {
      if (!current[d].known && proposal[d].known) {
        current[d] = proposal[d];
        changed = true;
      }
    }
    if (changed) queue_.push_back(key);
  }

  // `from`'s dimensions for a value `to` of the same rank, dimension for
  // dimension (resized where the extents differ).
  void MergeSame(const Key& from, const Key& to) {
    const Shape* from_shape = ArrayOf(from);
    const Shape* to_shape = ArrayOf(to);
    if (from_shape == nullptr || to_shape == nullptr || from_shape->rank() != to_shape->rank()) return;
    const ArrayIndex& source = *Entry(from);
    if (from_shape->dimensions() == to_shape->dimensions()) {
      Merge(to, source);
      return;
    }
    ArrayIndex proposal(to_shape->rank());
    for (int64_t d = 0; d < to_shape->rank(); ++d) {
      if (source[d].known) proposal[d] = Resized(source[d], from_shape->dimensions(d), to_shape->dimensions(d));
    }
    Merge(to, proposal);
  }

  // What `edge` says of the side opposite `from`.
  void Apply(const Edge& edge, const Key& from) {
    const bool forward = edge.a == from;
    const Key& to = forward ? edge.b : edge.a;
    const Shape* from_shape = ArrayOf(from);
    const Shape* to_shape = ArrayOf(to);
    if (from_shape == nullptr || to_shape == nullptr) return;
    const ArrayIndex& source = *Entry(from);
    ArrayIndex proposal(to_shape->rank());
    if (edge.kind == Edge::Kind::kRegroup) {
      proposal = Regroup(source, *from_shape, *to_shape, edge.physical);
    } else {
      for (size_t i = 0; i < edge.pairs.size(); ++i) {
        const auto [da, db] = edge.pairs[i];
        const int64_t s = forward ? da : db;
        const int64_t t = forward ? db : da;
        if (s < 0 || t < 0 || s >= from_shape->rank() || t >= to_shape->rank() || !source[s].known) continue;
        const WindowReach reach = i < edge.reach.size() ? edge.reach[i] : WindowReach{};
        proposal[t] =
            ThroughWindow(source[s], from_shape->dimensions(s), to_shape->dimensions(t), reach, forward);
      }
    }
    Merge(to, proposal);
  }

  // The relations `instr` makes that involve `key` (its result or one of
  // its operands), applied from `key`.
  void ApplyEdgesTouching(const Instruction& instr, const Key& key) {
    if (KeepsDimensions(instr.opcode()) && instr.shape().IsArray()) {
      const Key result{&instr, -1};
      if (key == result) {
        for (const Instruction* operand : instr.operands()) MergeSame(key, Key{operand, -1});
      } else {
        MergeSame(key, result);
      }
      return;
    }
    for (const Edge& edge : EdgesOf(instr)) {
      if (edge.a == key || edge.b == key) Apply(edge, key);
    }
  }

  void Visit(const Key& key) {
    const Instruction* instr = key.instr;
    const ArrayIndex& index = *Entry(key);
    // Toward what produced the value.
    if (Inside(instr)) {
      switch (instr->opcode()) {
        case Opcode::kGetTupleElement: {
          Result<int64_t> i = hlo::GetTupleIndex(*instr);
          if (i && key.leaf < 0) Merge(Key{instr->operand(0), *i}, index);
          break;
        }
        case Opcode::kTuple:
          if (key.leaf >= 0 && key.leaf < instr->operand_count()) Merge(Key{instr->operand(key.leaf), -1}, index);
          break;
        case Opcode::kOptimizationBarrier:
          if (instr->operand_count() >= 1) Merge(Key{instr->operand(0), key.leaf}, index);
          break;
        case Opcode::kFusion:
        case Opcode::kCall:
          for (const Computation* callee : instr->called_computations()) {
            if (callee->root() != nullptr) Merge(Key{callee->root(), key.leaf}, index);
          }
          break;
        case Opcode::kParameter: {
          auto it = caller_.find(instr->parent());
          if (it != caller_.end() && instr->parameter_number() < it->second->operand_count()) {
            Merge(Key{it->second->operand(instr->parameter_number()), key.leaf}, index);
          }
          break;
        }
        default:
          ApplyEdgesTouching(*instr, key);
          break;
      }
      // A called computation's root is its caller's value.
      if (instr->parent() != nullptr && instr == instr->parent()->root()) {
        auto it = caller_.find(instr->parent());
        if (it != caller_.end()) Merge(Key{it->second, key.leaf}, index);
      }
    }
    // Toward the kernel's instructions that read it.
    const std::vector<const Instruction*>& uses = nodes_.at(instr).uses;
    for (const Instruction* user : uses) {
      switch (user->opcode()) {
        case Opcode::kGetTupleElement: {
          Result<int64_t> i = hlo::GetTupleIndex(*user);
          if (i && *i == key.leaf) Merge(Key{user, -1}, index);
          break;
        }
        case Opcode::kTuple:
          for (int64_t j = 0; j < user->operand_count(); ++j) {
            if (user->operand(j) == instr && key.leaf < 0) Merge(Key{user, j}, index);
          }
          break;
        case Opcode::kOptimizationBarrier:
          Merge(Key{user, key.leaf}, index);
          break;
        case Opcode::kFusion:
        case Opcode::kCall:
          for (int64_t j = 0; j < user->operand_count(); ++j) {
            if (user->operand(j) != instr) continue;
            for (const Computation* callee : user->called_computations()) {
              if (j < callee->parameter_count() && callee->parameters()[j] != nullptr) {
                Merge(Key{callee->parameters()[j], key.leaf}, index);
              }
            }
          }
          break;
        default:
          ApplyEdgesTouching(*user, key);
          break;
      }
    }
  }

  std::unordered_map<const Instruction*, Node> nodes_;
  std::unordered_map<const Computation*, const Instruction*> caller_;
  std::deque<Key> queue_;
};

// Parts for dimensions `dims` of `extents` (major to minor) forming one
// space dimension: each takes the product of the later ones as its inner.
void AssignGroup(ArrayIndex& index, const std::vector<int64_t>& dims, const std::vector<int64_t>& extents,
                 int space_dim) {
  int64_t inner = 1;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const int64_t extent = std::max<int64_t>(extents[*it], 1);
    index[*it].known = true;
    index[*it].parts.clear();
    if (extent > 1) index[*it].parts.push_back(IndexPart{space_dim, inner, extent});
    inner *= extent;
  }
}

ArrayIndex FullIndex(const Shape& shape) {
  ArrayIndex index(shape.rank());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    index[d].known = true;
    if (shape.dimensions(d) > 1) index[d].parts.push_back(IndexPart{static_cast<int>(d), 1, shape.dimensions(d)});
  }
  return index;
}

int64_t ProductOf(const std::vector<int64_t>& extents, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d >= 0 && d < static_cast<int64_t>(extents.size())) p *= std::max<int64_t>(extents[d], 1);
  }
  return p;
}

// Seeds a dot's operands and result with the GEMM's (batch, m, n, k).
bool SeedDot(const Instruction& dot, KernelIndexing& k, Propagator& walk) {
  Result<hlo::DotDimensionNumbers> dn = hlo::GetDotDimensionNumbers(dot);
  if (!dn || dot.operand_count() < 2 || !dot.shape().IsArray()) return false;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  if (!lhs.IsArray() || !rhs.IsArray()) return false;
  const std::vector<int64_t> lhs_free = Others(lhs.rank(), dn->lhs_batch_dimensions, dn->lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free = Others(rhs.rank(), dn->rhs_batch_dimensions, dn->rhs_contracting_dimensions);
  const size_t nb = dn->lhs_batch_dimensions.size();
  if (dot.shape().rank() != static_cast<int64_t>(nb + lhs_free.size() + rhs_free.size())) return false;
  k.extents = {ProductOf(lhs.dimensions(), dn->lhs_batch_dimensions), ProductOf(lhs.dimensions(), lhs_free),
               ProductOf(rhs.dimensions(), rhs_free), ProductOf(lhs.dimensions(), dn->lhs_contracting_dimensions)};
  ArrayIndex l(lhs.rank()), r(rhs.rank()), out(dot.shape().rank());
  AssignGroup(l, dn->lhs_batch_dimensions, lhs.dimensions(), KernelIndexing::kBatch);
  AssignGroup(l, lhs_free, lhs.dimensions(), KernelIndexing::kM);
  AssignGroup(l, dn->lhs_contracting_dimensions, lhs.dimensions(), KernelIndexing::kK);
  AssignGroup(r, dn->rhs_batch_dimensions, rhs.dimensions(), KernelIndexing::kBatch);
  AssignGroup(r, rhs_free, rhs.dimensions(), KernelIndexing::kN);
  AssignGroup(r, dn->rhs_contracting_dimensions, rhs.dimensions(), KernelIndexing::kK);
  std::vector<int64_t> batch(nb), m(lhs_free.size()), n(rhs_free.size());
  std::iota(batch.begin(), batch.end(), 0);
  std::iota(m.begin(), m.end(), static_cast<int64_t>(nb));
  std::iota(n.begin(), n.end(), static_cast<int64_t>(nb + lhs_free.size()));
  AssignGroup(out, batch, dot.shape().dimensions(), KernelIndexing::kBatch);
  AssignGroup(out, m, dot.shape().dimensions(), KernelIndexing::kM);
  AssignGroup(out, n, dot.shape().dimensions(), KernelIndexing::kN);
  walk.Seed(Key{dot.operand(0), -1}, l);
  walk.Seed(Key{dot.operand(1), -1}, r);
  walk.Seed(Key{&dot, -1}, out);
  return true;
}

// Seeds a convolution's result: m = batch x output spatial, n = features
// per group (the groups are the batch). Its operands are read as GEMM
// panels built in VMEM, which the timing model describes itself.
bool SeedConvolution(const Instruction& conv, KernelIndexing& k, Propagator& walk) {
  Result<hlo::ConvolutionDimensionNumbers> dn = hlo::GetConvolutionDimensionNumbers(conv);
  Result<int64_t> feature_groups = hlo::GetFeatureGroupCount(conv);
  Result<int64_t> batch_groups = hlo::GetBatchGroupCount(conv);
  const Shape& out = conv.shape();
  if (!dn || !feature_groups || !batch_groups || conv.operand_count() < 2 || !out.IsArray() ||
      !conv.operand(1)->shape().IsArray() || dn->output_feature_dimension >= out.rank() ||
      dn->output_batch_dimension >= out.rank() || dn->kernel_input_feature_dimension >= conv.operand(1)->shape().rank()) {
    return false;
  }
  const Shape& kernel = conv.operand(1)->shape();
  const int64_t groups = std::max<int64_t>(1, *feature_groups * *batch_groups);
  const int64_t features = std::max<int64_t>(out.dimensions(dn->output_feature_dimension), 1);
  // The rows in the result's memory order, major to minor, as the kernel
  // writes them: with features minor and the batch next ({1,0,3,2} for
  // NCHW), a block of rows fills whole (batch, feature) tiles.
  std::vector<int64_t> rows;
  for (int64_t d : PhysicalOrder(out)) {
    if (d == dn->output_batch_dimension ||
        std::find(dn->output_spatial_dimensions.begin(), dn->output_spatial_dimensions.end(), d) !=
            dn->output_spatial_dimensions.end()) {
      rows.push_back(d);
    }
  }
  int64_t window = 1;
  for (int64_t d : dn->kernel_spatial_dimensions) window *= std::max<int64_t>(kernel.dimensions(d), 1);
  k.extents = {groups, ProductOf(out.dimensions(), rows), std::max<int64_t>(features / groups, 1),
               std::max<int64_t>(kernel.dimensions(dn->kernel_input_feature_dimension), 1) * window};
  ArrayIndex index(out.rank());
  AssignGroup(index, rows, out.dimensions(), KernelIndexing::kM);
  DimIndex& f = index[dn->output_feature_dimension];
  f.known = true;
  f.parts.clear();
  if (groups > 1) f.parts.push_back(IndexPart{KernelIndexing::kBatch, features / groups, groups});
  if (features / groups > 1) f.parts.push_back(IndexPart{KernelIndexing::kN, 1, features / groups});
  walk.Seed(Key{&conv, -1}, index);
  return true;
}

}  // namespace

int64_t DimBlock(const DimIndex& dim, int64_t dim_extent, std::span<const int64_t> blocks) {
  if (!dim.known) return std::max<int64_t>(dim_extent, 1);
  int64_t block = 1;
  for (const IndexPart& p : dim.parts) {
    if (p.space_dim < 0 || p.space_dim >= static_cast<int64_t>(blocks.size())) {
      block *= p.extent;
      continue;
    }
    const int64_t b = std::max<int64_t>(blocks[p.space_dim], 1);
    const int64_t inner = std::max<int64_t>(p.inner, 1);
    const int64_t stride = std::max<int64_t>(p.stride, 1), halo = std::max<int64_t>(p.halo, 0);
    block *= std::clamp<int64_t>((b + inner - 1) / inner * stride + halo, 1, std::max<int64_t>(p.extent, 1));
  }
  return block;
}

KernelIndexing IndexKernel(SpaceKind kind, const Instruction* anchor, std::span<const Instruction* const> inputs,
                           std::span<const Instruction* const> outputs) {
  KernelIndexing k;
  Propagator walk(inputs, outputs);
  bool seeded = false;
  const Shape* space_array = nullptr;  // the array the loop or reduce space is, as laid out
  if (anchor != nullptr) {
    switch (kind) {
      case SpaceKind::kLoop: {
        const Key key = BoundaryKey(anchor);
        if (const Shape* shape = ArrayOf(key)) {
          k.extents = shape->dimensions();
          walk.Seed(key, FullIndex(*shape));
          seeded = true;
          space_array = shape;
        }
        break;
      }
      case SpaceKind::kReduce: {
        const int64_t n = anchor->operand_count() / 2;
        if (anchor->opcode() != Opcode::kReduce || n < 1 || !anchor->operand(0)->shape().IsArray()) break;
        const Shape& operand = anchor->operand(0)->shape();
        k.extents = operand.dimensions();
        space_array = &operand;
        k.sequential.assign(k.extents.size(), false);
        if (Result<std::vector<int64_t>> dims = hlo::GetDimensions(*anchor)) {
          for (int64_t d : *dims) {
            if (d >= 0 && d < operand.rank()) k.sequential[d] = true;
          }
        }
        for (int64_t j = 0; j < n; ++j) {
          if (anchor->operand(j)->shape().IsArray() && anchor->operand(j)->shape().dimensions() == operand.dimensions()) {
            walk.Seed(Key{anchor->operand(j), -1}, FullIndex(operand));
          }
        }
        seeded = true;
        break;
      }
      case SpaceKind::kContraction:
        seeded = anchor->opcode() == Opcode::kDot ? SeedDot(*anchor, k, walk) : SeedConvolution(*anchor, k, walk);
        if (seeded) k.sequential = {false, false, false, true};
        break;
      case SpaceKind::kUntiled:
        break;
    }
  }
  if (!seeded) {
    k = KernelIndexing{};
    k.extents.clear();
  } else {
    k.kind = kind;
    walk.Run();
    // Outputs the walk cannot tie to the space through data (a broadcast
    // constant written beside the result) are written by the same loop:
    // one shaped like the space, or like a reduce's kept dimensions,
    // follows it index for index.
    if (kind != SpaceKind::kContraction) {
      std::vector<int64_t> kept;
      std::vector<int> kept_dims;
      for (size_t s = 0; s < k.extents.size(); ++s) {
        if (kind == SpaceKind::kReduce && k.sequential[s]) continue;
        kept.push_back(k.extents[s]);
        kept_dims.push_back(static_cast<int>(s));
      }
      for (const Instruction* out : outputs) {
        const Key key = BoundaryKey(out);
        const Shape* shape = ArrayOf(key);
        if (shape == nullptr) continue;
        ArrayIndex index(shape->rank());
        if (shape->dimensions() == k.extents) {
          index = FullIndex(*shape);
        } else if (shape->dimensions() == kept) {
          for (size_t d = 0; d < kept.size(); ++d) {
            index[d].known = true;
            if (kept[d] > 1) index[d].parts.push_back(IndexPart{kept_dims[d], 1, kept[d]});
          }
        } else {
          continue;
        }
        walk.Seed(key, index);
      }
      walk.Run();
    }
  }
  for (int64_t& e : k.extents) e = std::max<int64_t>(e, 1);
  if (k.sequential.size() != k.extents.size()) k.sequential.assign(k.extents.size(), false);
  for (const Instruction* in : inputs) k.inputs.push_back(walk.Get(BoundaryKey(in)));
  for (const Instruction* out : outputs) k.outputs.push_back(walk.Get(BoundaryKey(out)));
  if (!seeded) {
    for (auto* list : {&k.inputs, &k.outputs}) {
      for (ArrayIndex& a : *list) {
        for (DimIndex& d : a) d = DimIndex{};
      }
    }
  }

  const size_t rank = k.extents.size();
  k.blockable.assign(rank, false);
  k.align.assign(rank, 1);
  if (k.kind == SpaceKind::kContraction) {
    k.blockable = {false, true, true, true};
  } else if (k.kind != SpaceKind::kUntiled) {
    std::vector<bool> lanes(rank, false);
    int64_t sublanes = kVectorSublanes;
    // The space's own two minor dimensions, in the order the array it is
    // lays them out: a loop over feature-minor activations walks features
    // along the lanes.
    std::vector<int64_t> order =
        space_array != nullptr ? PhysicalOrder(*space_array) : std::vector<int64_t>{};
    if (order.size() != rank) {
      order.resize(rank);
      std::iota(order.begin(), order.end(), 0);
    }
    for (size_t i = rank >= 2 ? rank - 2 : 0; i < rank; ++i) k.blockable[order[i]] = true;
    if (rank >= 1) lanes[order[rank - 1]] = true;
    auto mark = [&](const Instruction* instr, const ArrayIndex& index) {
      const Shape* shape = ArrayOf(BoundaryKey(instr));
      if (shape == nullptr) return;
      sublanes = std::max(sublanes, SublaneTile(shape->element_type()));
      const std::vector<int64_t> tiled = TiledDimensions(*shape);
      for (size_t i = 0; i < tiled.size(); ++i) {
        if (tiled[i] >= static_cast<int64_t>(index.size())) continue;
        for (const IndexPart& p : index[tiled[i]].parts) {
          if (p.space_dim < 0 || p.space_dim >= static_cast<int>(rank)) continue;
          k.blockable[p.space_dim] = true;
          if (i + 1 == tiled.size()) lanes[p.space_dim] = true;
        }
      }
    };
    for (size_t i = 0; i < inputs.size(); ++i) mark(inputs[i], k.inputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i) mark(outputs[i], k.outputs[i]);
    for (size_t s = 0; s < rank; ++s) {
      if (k.blockable[s]) k.align[s] = lanes[s] ? kLanes : sublanes;
    }
  }
  k.stacked.assign(rank, false);
  if (k.kind == SpaceKind::kLoop || k.kind == SpaceKind::kReduce) {
    for (size_t s = 0; s < rank; ++s) k.stacked[s] = !k.blockable[s] && k.extents[s] > 1;
  } else if (k.kind == SpaceKind::kContraction && rank > KernelIndexing::kBatch) {
    // Whole GEMMs of consecutive batch entries stack in one block.
    k.stacked[KernelIndexing::kBatch] = k.extents[KernelIndexing::kBatch] > 1;
  }
  return k;
}

}  // namespace kiln::runtime
