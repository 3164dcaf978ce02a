#include "runtime/timing/kernel_space.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "compiler/hlo/op_attributes.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using Space = IterationSpace;

double Product(std::span<const int64_t> dims) {
  double p = 1;
  for (int64_t d : dims) p *= static_cast<double>(d);
  return p;
}

// Entry parameter a value is a relabelled copy of (through converts,
// bitcasts, reshapes, copies and transposes, and out of fusions).
class ParameterTracer {
 public:
  explicit ParameterTracer(const hlo::Module& module) {
    for (const auto& c : module.computations()) {
      for (const auto& i : c->instructions()) {
        if (i->opcode() != Opcode::kFusion) continue;
        for (const Computation* callee : i->called_computations()) caller_.emplace(callee, i.get());
      }
    }
  }

  std::optional<int64_t> Trace(const Instruction* value) const {
    for (int hops = 0; hops < 64; ++hops) {
      switch (value->opcode()) {
        case Opcode::kParameter: {
          if (value->parent() != nullptr && value->parent()->is_entry()) return value->parameter_number();
          auto it = caller_.find(value->parent());
          if (it == caller_.end() || value->parameter_number() >= it->second->operand_count()) {
            return std::nullopt;
          }
          value = it->second->operand(value->parameter_number());
          break;
        }
        case Opcode::kConvert:
        case Opcode::kBitcast:
        case Opcode::kReshape:
        case Opcode::kCopy:
        case Opcode::kTranspose:
          value = value->operand(0);
          break;
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }

 private:
  std::unordered_map<const Computation*, const Instruction*> caller_;
};

// A dimension following all of space dimension `s` (no parts when it is 1).
DimIndex Plain(int s, int64_t extent) {
  DimIndex d;
  d.known = true;
  if (extent > 1) d.parts.push_back(IndexPart{s, 1, extent});
  return d;
}

// `shape` as laid out in memory, its dimensions following `index` (logical
// order; an index of the wrong rank leaves every dimension whole).
SpaceArray Laid(const hlo::Shape& shape, const ArrayIndex& index, bool output) {
  SpaceArray a;
  a.type = shape.element_type();
  a.output = output;
  for (int64_t d : PhysicalOrder(shape)) {
    a.dims.push_back(shape.dimensions(d));
    a.index.push_back(static_cast<int64_t>(index.size()) == shape.rank() ? index[d] : DimIndex{});
  }
  return a;
}

// A contraction operand read as a GEMM panel: the dot's lhs ([batch, m, k])
// or rhs ([batch, k, n]) oriented as it lies in memory; a convolution's
// input as rows following m with its features whole (its window is built
// in VMEM once per m block), each row carrying the input positions its
// output row covers alone: one for a stride-1 convolution, stride^2 for a
// strided one, the whole image for a weight gradient (one output position
// per filter tap, every input position summed into it). A block of output
// rows thus reads its share of the input, and a pass over m the input once.
SpaceArray OperandView(const Contraction& c, hlo::PrimitiveType type, bool lhs) {
  const GemmShape& g = c.gemm;
  const int64_t batch = static_cast<int64_t>(std::max(g.batch, 1.0));
  SpaceArray a;
  a.type = type;
  if (lhs && c.instruction != nullptr && c.instruction->opcode() == Opcode::kConvolution) {
    int64_t features = std::max<int64_t>(1, g.k);
    if (const auto dn = hlo::GetConvolutionDimensionNumbers(*c.instruction)) {
      const hlo::Shape& in = c.instruction->operand(0)->shape();
      if (dn->input_feature_dimension < in.rank() && in.is_static()) {
        const int64_t in_features = std::max<int64_t>(1, in.dimensions(dn->input_feature_dimension));
        const int64_t positions = std::max<int64_t>(1, in.ElementCount() / in_features);
        features = std::max<int64_t>(1, in_features / batch) * std::max<int64_t>(1, CeilDiv(positions, g.m));
      }
    }
    a.dims = {g.m, features};
    a.index = {Plain(Space::kM, g.m), DimIndex{}};
  } else if (lhs) {
    a.dims = c.lhs_k_minor ? std::vector<int64_t>{g.m, g.k} : std::vector<int64_t>{g.k, g.m};
    a.index = c.lhs_k_minor ? std::vector<DimIndex>{Plain(Space::kM, g.m), Plain(Space::kK, g.k)}
                            : std::vector<DimIndex>{Plain(Space::kK, g.k), Plain(Space::kM, g.m)};
  } else {
    a.dims = c.rhs_n_minor ? std::vector<int64_t>{g.k, g.n} : std::vector<int64_t>{g.n, g.k};
    a.index = c.rhs_n_minor ? std::vector<DimIndex>{Plain(Space::kK, g.k), Plain(Space::kN, g.n)}
                            : std::vector<DimIndex>{Plain(Space::kN, g.n), Plain(Space::kK, g.k)};
  }
  a.dims.insert(a.dims.begin(), batch);
  a.index.insert(a.index.begin(), Plain(Space::kBatch, batch));
  return a;
}

bool FullyKnown(const ArrayIndex& index) {
  return std::all_of(index.begin(), index.end(), [](const DimIndex& d) { return d.known; });
}

// The kernel's boundary values: parameter i for inputs[i], the root (or its
// tuple's elements) for the outputs; empty when they do not line up.
struct Boundary {
  std::vector<const Instruction*> inputs;
  std::vector<const Instruction*> outputs;
};
std::optional<Boundary> KernelBoundary(const hlo::Module& module, size_t inputs, size_t outputs) {
  const Computation& entry = *module.entry();
  Boundary b;
  if (entry.parameter_count() != static_cast<int64_t>(inputs)) return std::nullopt;
  for (const Instruction* p : entry.parameters()) {
    if (p == nullptr) return std::nullopt;
    b.inputs.push_back(p);
  }
  const Instruction* root = entry.root();
  if (root == nullptr) return std::nullopt;
  if (outputs == 1 && root->shape().IsArray()) {
    b.outputs.push_back(root);
  } else if (root->opcode() == Opcode::kTuple && root->operand_count() == static_cast<int64_t>(outputs)) {
    for (const Instruction* o : root->operands()) b.outputs.push_back(o);
  } else {
    return std::nullopt;
  }
  return b;
}

}  // namespace

IterationSpace MakeIterationSpace(const hlo::Module& module, const KernelWork& work,
                                  std::span<const hlo::Shape* const> inputs,
                                  std::span<const hlo::Shape* const> outputs) {
  IterationSpace s;
  auto whole = [&] {
    s.arrays.clear();
    for (const hlo::Shape* shape : inputs) s.arrays.push_back(Laid(*shape, {}, false));
    for (const hlo::Shape* shape : outputs) s.arrays.push_back(Laid(*shape, {}, true));
  };
  for (const hlo::Shape* shape : inputs) {
    if (!shape->IsArray()) return s;
  }
  for (const hlo::Shape* shape : outputs) {
    if (!shape->IsArray()) return s;
  }
  std::optional<Boundary> boundary = KernelBoundary(module, inputs.size(), outputs.size());
  const Contraction* main = work.MainContraction();
  SpaceKind kind = SpaceKind::kUntiled;
  const Instruction* anchor = nullptr;
  if (work.opaque || outputs.empty() || !boundary) {
    kind = SpaceKind::kUntiled;
  } else if (main != nullptr) {
    kind = SpaceKind::kContraction;
    anchor = main->instruction;
  } else if (work.widest_reduce != nullptr && work.widest_reduce->operand(0)->shape().IsArray()) {
    kind = SpaceKind::kReduce;
    anchor = work.widest_reduce;
  } else {
    kind = SpaceKind::kLoop;
    for (const Instruction* out : boundary->outputs) {
      if (anchor == nullptr || Product(out->shape().dimensions()) > Product(anchor->shape().dimensions())) {
        anchor = out;
      }
    }
  }
  KernelIndexing indexing;
  if (kind != SpaceKind::kUntiled) indexing = IndexKernel(kind, anchor, boundary->inputs, boundary->outputs);
  if (indexing.kind == SpaceKind::kUntiled) {
    whole();
  } else {
    s.kind = indexing.kind;
    s.extents = indexing.extents;
    s.sequential = indexing.sequential;
    s.blockable = indexing.blockable;
    s.align = indexing.align;
    s.stacked = indexing.stacked;
    std::optional<int64_t> lhs_param, rhs_param;
    if (s.kind == SpaceKind::kContraction) {
      s.contraction = main;
      ParameterTracer tracer(module);
      lhs_param = tracer.Trace(main->instruction->operand(0));
      rhs_param = tracer.Trace(main->instruction->operand(1));
    }
    const bool convolution = main != nullptr && main->instruction->opcode() == Opcode::kConvolution;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ArrayIndex& index = indexing.inputs[i];
      const bool lhs = lhs_param == static_cast<int64_t>(i), rhs = rhs_param == static_cast<int64_t>(i);
      if (s.kind == SpaceKind::kContraction && (lhs || rhs) && (convolution || !FullyKnown(index))) {
        s.arrays.push_back(OperandView(*main, inputs[i]->element_type(), lhs));
      } else {
        s.arrays.push_back(Laid(*inputs[i], index, false));
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) s.arrays.push_back(Laid(*outputs[i], indexing.outputs[i], true));
  }
  for (const SpaceArray& a : s.arrays) s.sublanes = std::max(s.sublanes, SublaneTile(a.type));
  return s;
}

IterationSpace LoneContractionSpace(const Contraction& c) {
  IterationSpace s;
  s.kind = SpaceKind::kContraction;
  const int64_t batch = static_cast<int64_t>(std::max(c.gemm.batch, 1.0));
  s.extents = {batch, c.gemm.m, c.gemm.n, c.gemm.k};
  s.sequential = {false, false, false, true};
  s.blockable = {false, true, true, true};
  s.align = {1, 1, 1, 1};
  s.stacked = {false, false, false, false};
  s.contraction = &c;
  s.arrays.push_back(OperandView(c, c.lhs_type, /*lhs=*/true));
  s.arrays.push_back(OperandView(c, c.rhs_type, /*lhs=*/false));
  SpaceArray out;
  out.type = c.out_type;
  out.output = true;
  out.dims = {batch, c.gemm.m, c.gemm.n};
  out.index = {Plain(Space::kBatch, batch), Plain(Space::kM, c.gemm.m), Plain(Space::kN, c.gemm.n)};
  s.arrays.push_back(std::move(out));
  for (const SpaceArray& a : s.arrays) s.sublanes = std::max(s.sublanes, SublaneTile(a.type));
  return s;
}

}  // namespace kiln::runtime::timing
