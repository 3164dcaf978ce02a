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

SpaceArray Whole(const hlo::Shape& shape, bool output) {
  SpaceArray a;
  a.type = shape.element_type();
  a.dims = shape.dimensions();
  a.space_dim.assign(a.dims.size(), -1);
  a.output = output;
  return a;
}

// Maps each array dimension to the space dimension of equal extent at the
// same distance from the minor end.
SpaceArray AlignedToSpace(const hlo::Shape& shape, std::span<const int64_t> space,
                          std::span<const int> space_index, bool output) {
  SpaceArray a = Whole(shape, output);
  const size_t q = a.dims.size();
  for (size_t i = 1; i <= std::min(q, space.size()); ++i) {
    if (a.dims[q - i] == space[space.size() - i]) a.space_dim[q - i] = space_index[space.size() - i];
  }
  return a;
}

// An epilogue input or an output of a contraction kernel: minor dimension
// n, the rest m (collapsed when they multiply to m) and batch.
SpaceArray GemmOutputView(const hlo::Shape& shape, const GemmShape& g, bool output) {
  SpaceArray whole = Whole(shape, output);
  const std::vector<int64_t>& d = whole.dims;
  if (d.empty() || d.back() != g.n) return whole;
  double rest = Product(std::span(d).first(d.size() - 1));
  SpaceArray a = whole;
  if (rest == static_cast<double>(g.m)) {
    a.dims = {g.m, g.n};
    a.space_dim = {Space::kM, Space::kN};
  } else if (rest == g.batch * static_cast<double>(g.m) && g.batch > 1) {
    a.dims = {static_cast<int64_t>(g.batch), g.m, g.n};
    a.space_dim = {Space::kBatch, Space::kM, Space::kN};
  } else {
    a.space_dim.back() = Space::kN;
    if (d.size() >= 2 && d[d.size() - 2] == g.m) a.space_dim[d.size() - 2] = Space::kM;
  }
  return a;
}

// The dot's lhs ([batch, m, k]) or rhs ([batch, k, n]) as a GEMM block.
SpaceArray OperandView(const Contraction& c, hlo::PrimitiveType type, bool lhs) {
  const GemmShape& g = c.gemm;
  SpaceArray a;
  a.type = type;
  if (lhs) {
    a.dims = c.lhs_k_minor ? std::vector<int64_t>{g.m, g.k} : std::vector<int64_t>{g.k, g.m};
    a.space_dim = c.lhs_k_minor ? std::vector<int>{Space::kM, Space::kK}
                                : std::vector<int>{Space::kK, Space::kM};
    if (c.instruction != nullptr && c.instruction->opcode() == Opcode::kConvolution) {
      // The input is read once per m block (its window is built in VMEM):
      // rows follow m, features are taken whole.
      a.dims = {g.m, std::max<int64_t>(1, g.k)};
      a.space_dim = {Space::kM, -1};
      if (const auto dn = hlo::GetConvolutionDimensionNumbers(*c.instruction)) {
        const hlo::Shape& in = c.instruction->operand(0)->shape();
        if (dn->input_feature_dimension < in.rank()) {
          a.dims[1] = std::max<int64_t>(1, in.dimensions(dn->input_feature_dimension) /
                                               static_cast<int64_t>(std::max(g.batch, 1.0)));
        }
      }
    }
  } else {
    a.dims = c.rhs_n_minor ? std::vector<int64_t>{g.k, g.n} : std::vector<int64_t>{g.n, g.k};
    a.space_dim = c.rhs_n_minor ? std::vector<int>{Space::kK, Space::kN}
                                : std::vector<int>{Space::kN, Space::kK};
  }
  a.dims.insert(a.dims.begin(), static_cast<int64_t>(std::max(g.batch, 1.0)));
  a.space_dim.insert(a.space_dim.begin(), Space::kBatch);
  return a;
}

IterationSpace ContractionSpace(const hlo::Module& module, const Contraction& c,
                                std::span<const hlo::Shape* const> inputs,
                                std::span<const hlo::Shape* const> outputs) {
  IterationSpace s;
  s.kind = SpaceKind::kContraction;
  s.contraction = &c;
  const GemmShape& g = c.gemm;
  s.extents = {static_cast<int64_t>(std::max(g.batch, 1.0)), g.m, g.n, g.k};
  s.sequential = {false, false, false, true};
  s.blockable = {false, true, true, true};
  ParameterTracer tracer(module);
  const Instruction& op = *c.instruction;
  std::optional<int64_t> lhs_param = tracer.Trace(op.operand(0));
  std::optional<int64_t> rhs_param = tracer.Trace(op.operand(1));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlo::Shape& shape = *inputs[i];
    const int64_t p = static_cast<int64_t>(i);
    if (lhs_param == p || (!lhs_param && shape.dimensions() == op.operand(0)->shape().dimensions())) {
      s.arrays.push_back(OperandView(c, shape.element_type(), /*lhs=*/true));
    } else if (rhs_param == p ||
               (!rhs_param && shape.dimensions() == op.operand(1)->shape().dimensions())) {
      s.arrays.push_back(OperandView(c, shape.element_type(), /*lhs=*/false));
    } else {
      s.arrays.push_back(GemmOutputView(shape, g, /*output=*/false));
    }
  }
  for (const hlo::Shape* shape : outputs) s.arrays.push_back(GemmOutputView(*shape, g, true));
  return s;
}

IterationSpace ReduceSpace(const Instruction& reduce, std::span<const hlo::Shape* const> inputs,
                           std::span<const hlo::Shape* const> outputs) {
  IterationSpace s;
  s.kind = SpaceKind::kReduce;
  const hlo::Shape& operand = reduce.operand(0)->shape();
  s.extents = operand.dimensions();
  const size_t rank = s.extents.size();
  s.sequential.assign(rank, false);
  if (auto dims = hlo::GetDimensions(reduce)) {
    for (int64_t d : *dims) {
      if (d >= 0 && d < static_cast<int64_t>(rank)) s.sequential[d] = true;
    }
  }
  s.blockable.assign(rank, false);
  for (size_t i = rank >= 2 ? rank - 2 : 0; i < rank; ++i) s.blockable[i] = true;
  std::vector<int> all(rank);
  std::vector<int64_t> kept;
  std::vector<int> kept_index;
  for (size_t i = 0; i < rank; ++i) {
    all[i] = static_cast<int>(i);
    if (!s.sequential[i]) {
      kept.push_back(s.extents[i]);
      kept_index.push_back(static_cast<int>(i));
    }
  }
  auto map = [&](const hlo::Shape& shape, bool output) {
    if (shape.dimensions() == s.extents) return AlignedToSpace(shape, s.extents, all, output);
    if (shape.dimensions() == kept) return AlignedToSpace(shape, kept, kept_index, output);
    return AlignedToSpace(shape, s.extents, all, output);
  };
  for (const hlo::Shape* shape : inputs) s.arrays.push_back(map(*shape, false));
  for (const hlo::Shape* shape : outputs) s.arrays.push_back(map(*shape, true));
  return s;
}

IterationSpace LoopSpace(std::span<const hlo::Shape* const> inputs,
                         std::span<const hlo::Shape* const> outputs) {
  IterationSpace s;
  s.kind = SpaceKind::kLoop;
  const hlo::Shape* largest = nullptr;
  for (const hlo::Shape* shape : outputs) {
    if (largest == nullptr || Product(shape->dimensions()) > Product(largest->dimensions())) {
      largest = shape;
    }
  }
  if (largest != nullptr) s.extents = largest->dimensions();
  const size_t rank = s.extents.size();
  s.sequential.assign(rank, false);
  s.blockable.assign(rank, false);
  for (size_t i = rank >= 2 ? rank - 2 : 0; i < rank; ++i) s.blockable[i] = true;
  std::vector<int> all(rank);
  for (size_t i = 0; i < rank; ++i) all[i] = static_cast<int>(i);
  for (const hlo::Shape* shape : inputs) s.arrays.push_back(AlignedToSpace(*shape, s.extents, all, false));
  for (const hlo::Shape* shape : outputs) s.arrays.push_back(AlignedToSpace(*shape, s.extents, all, true));
  return s;
}

}  // namespace

IterationSpace MakeIterationSpace(const hlo::Module& module, const KernelWork& work,
                                  std::span<const hlo::Shape* const> inputs,
                                  std::span<const hlo::Shape* const> outputs) {
  IterationSpace s;
  for (const hlo::Shape* shape : inputs) {
    if (!shape->IsArray()) return s;
  }
  for (const hlo::Shape* shape : outputs) {
    if (!shape->IsArray()) return s;
  }
  if (work.opaque || outputs.empty()) {
    s.arrays.clear();
  } else if (const Contraction* c = work.MainContraction()) {
    s = ContractionSpace(module, *c, inputs, outputs);
  } else if (work.widest_reduce != nullptr && work.widest_reduce->operand(0)->shape().IsArray()) {
    s = ReduceSpace(*work.widest_reduce, inputs, outputs);
  } else {
    s = LoopSpace(inputs, outputs);
  }
  if (s.kind == SpaceKind::kUntiled) {
    for (const hlo::Shape* shape : inputs) s.arrays.push_back(Whole(*shape, false));
    for (const hlo::Shape* shape : outputs) s.arrays.push_back(Whole(*shape, true));
  }
  for (const SpaceArray& a : s.arrays) s.sublanes = std::max(s.sublanes, SublaneTile(a.type));
  return s;
}

}  // namespace kiln::runtime::timing
