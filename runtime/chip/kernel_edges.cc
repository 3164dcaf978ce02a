#include "runtime/chip/kernel_edges.h"

#include <algorithm>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/op_class.h"

namespace kiln::runtime::kernel_edges {
namespace {

Edge Identity(Key a, Key b, int64_t rank) {
  Edge e{Edge::Kind::kDims, a, b, {}, false};
  for (int64_t d = 0; d < rank; ++d) e.pairs.emplace_back(d, d);
  return e;
}

// How each of the first `rank` window dimensions of `instr` reads its
// operand ({1, 0} where it has none or no window). A base-dilated window
// (a transposed convolution) reads fewer operand rows than result rows:
// resized as before.
std::vector<WindowReach> WindowReaches(const Instruction& instr, size_t rank) {
  std::vector<WindowReach> reach(rank);
  Result<hlo::Window> window = hlo::GetWindow(instr);
  if (!window) return reach;
  for (size_t i = 0; i < rank && i < window->dimensions.size(); ++i) {
    const hlo::WindowDimension& d = window->dimensions[i];
    if (d.base_dilation > 1) continue;
    const int64_t stride = std::max<int64_t>(d.stride, 1);
    const int64_t extent = (std::max<int64_t>(d.size, 1) - 1) * std::max<int64_t>(d.window_dilation, 1) + 1;
    reach[i] = WindowReach{stride, std::max<int64_t>(extent - stride, 0)};
  }
  return reach;
}

}  // namespace

// The array shape of a value, or nullptr (tokens, nested tuples).
const Shape* ArrayOf(const Key& key) {
  const Shape& shape = key.instr->shape();
  if (key.leaf < 0) return shape.IsArray() ? &shape : nullptr;
  if (!shape.IsTuple() || key.leaf >= static_cast<int64_t>(shape.tuple_shapes().size())) return nullptr;
  const Shape& element = shape.tuple_shapes(key.leaf);
  return element.IsArray() ? &element : nullptr;
}

// The key of an input or output: the array itself or a tuple's first element.
Key BoundaryKey(const Instruction* instr) {
  return Key{instr, instr->shape().IsTuple() ? 0 : -1};
}


int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= std::max<int64_t>(d, 1);
  return p;
}


// Dimensions 0..rank-1 in neither `a` nor `b` (a dot operand's free ones).
std::vector<int64_t> Others(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) {
      out.push_back(d);
    }
  }
  return out;
}

// Ops whose operands of the result's rank follow it dimension for dimension.
bool KeepsDimensions(Opcode op) {
  return hlo::IsElementwise(op) || op == Opcode::kMap || op == Opcode::kCopyStart || op == Opcode::kCopyDone ||
         op == Opcode::kStochasticConvert;
}

// The dimension relations instruction `instr` makes between its operands
// and its result(s). Structural instructions (tuple, get-tuple-element,
// fusion, call, parameter) are linked elsewhere.
std::vector<Edge> EdgesOf(const Instruction& instr) {
  std::vector<Edge> edges;
  const Key result{&instr, -1};
  const Shape& shape = instr.shape();
  const Opcode op = instr.opcode();
  auto operand_key = [&](int64_t i) { return Key{instr.operand(i), -1}; };
  auto rank_of = [&](int64_t i) { return instr.operand(i)->shape().IsArray() ? instr.operand(i)->shape().rank() : -1; };

  if (KeepsDimensions(op) || op == Opcode::kAddDependency || op == Opcode::kDomain) {
    if (!shape.IsArray()) return edges;
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (rank_of(i) == shape.rank()) edges.push_back(Identity(result, operand_key(i), shape.rank()));
      if (op == Opcode::kAddDependency || op == Opcode::kDomain) break;
    }
    return edges;
  }
  switch (op) {
    case Opcode::kBroadcast: {
      Result<std::vector<int64_t>> dims = hlo::GetDimensions(instr);
      if (!dims || instr.operand_count() < 1 || rank_of(0) != static_cast<int64_t>(dims->size())) break;
      Edge e{Edge::Kind::kDims, result, operand_key(0), {}, false};
      for (size_t i = 0; i < dims->size(); ++i) e.pairs.emplace_back((*dims)[i], static_cast<int64_t>(i));
      edges.push_back(std::move(e));
      break;
    }
    case Opcode::kTranspose: {
      Result<std::vector<int64_t>> perm = hlo::GetDimensions(instr);
      if (!perm || instr.operand_count() < 1 || rank_of(0) != static_cast<int64_t>(perm->size())) break;
      Edge e{Edge::Kind::kDims, result, operand_key(0), {}, false};
      for (size_t i = 0; i < perm->size(); ++i) e.pairs.emplace_back(static_cast<int64_t>(i), (*perm)[i]);
      edges.push_back(std::move(e));
      break;
    }
    case Opcode::kReshape:
    case Opcode::kBitcast:
      if (instr.operand_count() >= 1 && shape.IsArray() && rank_of(0) >= 0) {
        edges.push_back(Edge{Edge::Kind::kRegroup, result, operand_key(0), {}, op == Opcode::kBitcast});
      }
      break;
    case Opcode::kBitcastConvert: {
      // Same rank: same dims; a narrowing or widening one adds or drops the
      // minor dimension.
      if (instr.operand_count() < 1 || !shape.IsArray() || rank_of(0) < 0) break;
      int64_t common = std::min(shape.rank(), rank_of(0));
      edges.push_back(Identity(result, operand_key(0), common));
      break;
    }
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kDynamicUpdateSlice:
      if (instr.operand_count() >= 1 && shape.IsArray() && rank_of(0) == shape.rank()) {
        edges.push_back(Identity(result, operand_key(0), shape.rank()));
      }
      if (op == Opcode::kDynamicUpdateSlice && instr.operand_count() >= 2 && rank_of(1) == shape.rank()) {
        edges.push_back(Identity(result, operand_key(1), shape.rank()));
      }
      break;
    case Opcode::kConcatenate:
      if (!shape.IsArray()) break;
      for (int64_t i = 0; i < instr.operand_count(); ++i) {
        if (rank_of(i) == shape.rank()) edges.push_back(Identity(result, operand_key(i), shape.rank()));
      }
      break;
    case Opcode::kReduceWindow:
    case Opcode::kReduce: {
      const int64_t n = instr.operand_count() / 2;
      std::vector<int64_t> kept;
      if (op == Opcode::kReduce) {
        Result<std::vector<int64_t>> reduced = hlo::GetDimensions(instr);
        if (!reduced || n < 1 || rank_of(0) < 0) break;
        for (int64_t d = 0; d < rank_of(0); ++d) {
          if (std::find(reduced->begin(), reduced->end(), d) == reduced->end()) kept.push_back(d);
        }
      } else if (n >= 1 && rank_of(0) >= 0) {
        for (int64_t d = 0; d < rank_of(0); ++d) kept.push_back(d);
      }
      for (int64_t j = 0; j < n; ++j) {
        if (rank_of(j) != rank_of(0)) continue;
        Key out{&instr, shape.IsTuple() ? j : -1};
        const Shape* out_shape = ArrayOf(out);
        if (out_shape == nullptr || out_shape->rank() != static_cast<int64_t>(kept.size())) continue;
        Edge e{Edge::Kind::kDims, out, operand_key(j), {}, false};
        for (size_t i = 0; i < kept.size(); ++i) e.pairs.emplace_back(static_cast<int64_t>(i), kept[i]);
        if (op == Opcode::kReduceWindow) e.reach = WindowReaches(instr, kept.size());
        edges.push_back(std::move(e));
        if (j > 0) edges.push_back(Identity(operand_key(0), operand_key(j), rank_of(0)));
      }
      break;
    }
    case Opcode::kDot: {
      Result<hlo::DotDimensionNumbers> dn = hlo::GetDotDimensionNumbers(instr);
      if (!dn || instr.operand_count() < 2 || rank_of(0) < 0 || rank_of(1) < 0 || !shape.IsArray()) break;
      std::vector<int64_t> lhs_free = Others(rank_of(0), dn->lhs_batch_dimensions, dn->lhs_contracting_dimensions);
      std::vector<int64_t> rhs_free = Others(rank_of(1), dn->rhs_batch_dimensions, dn->rhs_contracting_dimensions);
      const size_t nb = dn->lhs_batch_dimensions.size();
      if (dn->rhs_batch_dimensions.size() != nb ||
          dn->lhs_contracting_dimensions.size() != dn->rhs_contracting_dimensions.size() ||
          static_cast<int64_t>(nb + lhs_free.size() + rhs_free.size()) != shape.rank()) {
        break;
      }
      Edge lhs{Edge::Kind::kDims, result, operand_key(0), {}, false};
      Edge rhs{Edge::Kind::kDims, result, operand_key(1), {}, false};
      Edge pair{Edge::Kind::kDims, operand_key(0), operand_key(1), {}, false};
      for (size_t i = 0; i < nb; ++i) {
        lhs.pairs.emplace_back(static_cast<int64_t>(i), dn->lhs_batch_dimensions[i]);
        rhs.pairs.emplace_back(static_cast<int64_t>(i), dn->rhs_batch_dimensions[i]);
        pair.pairs.emplace_back(dn->lhs_batch_dimensions[i], dn->rhs_batch_dimensions[i]);
      }
      for (size_t i = 0; i < lhs_free.size(); ++i) lhs.pairs.emplace_back(static_cast<int64_t>(nb + i), lhs_free[i]);
      for (size_t i = 0; i < rhs_free.size(); ++i) {
        rhs.pairs.emplace_back(static_cast<int64_t>(nb + lhs_free.size() + i), rhs_free[i]);
      }
      for (size_t i = 0; i < dn->lhs_contracting_dimensions.size(); ++i) {
        pair.pairs.emplace_back(dn->lhs_contracting_dimensions[i], dn->rhs_contracting_dimensions[i]);
      }
      edges.push_back(std::move(lhs));
      edges.push_back(std::move(rhs));
      edges.push_back(std::move(pair));
      break;
    }
    case Opcode::kConvolution: {
      Result<hlo::ConvolutionDimensionNumbers> dn = hlo::GetConvolutionDimensionNumbers(instr);
      Result<int64_t> feature_groups = hlo::GetFeatureGroupCount(instr);
      Result<int64_t> batch_groups = hlo::GetBatchGroupCount(instr);
      if (!dn || !feature_groups || !batch_groups || instr.operand_count() < 2 || !shape.IsArray() ||
          rank_of(0) != shape.rank() || rank_of(1) != shape.rank() ||
          dn->input_spatial_dimensions.size() != dn->output_spatial_dimensions.size()) {
        break;
      }
      Edge in{Edge::Kind::kDims, result, operand_key(0), {}, false};
      const std::vector<WindowReach> reach = WindowReaches(instr, dn->output_spatial_dimensions.size());
      if (*batch_groups == 1) {
        in.pairs.emplace_back(dn->output_batch_dimension, dn->input_batch_dimension);
        in.reach.push_back({});
      }
      for (size_t i = 0; i < dn->output_spatial_dimensions.size(); ++i) {
        in.pairs.emplace_back(dn->output_spatial_dimensions[i], dn->input_spatial_dimensions[i]);
        in.reach.push_back(reach[i]);
      }
      edges.push_back(Edge{Edge::Kind::kDims, result, operand_key(1),
                           {{dn->output_feature_dimension, dn->kernel_output_feature_dimension}}, false});
      if (*feature_groups == 1) {
        edges.push_back(Edge{Edge::Kind::kDims, operand_key(0), operand_key(1),
                             {{dn->input_feature_dimension, dn->kernel_input_feature_dimension}}, false});
      }
      // A depthwise convolution without a channel multiplier: output
      // feature f reads input feature f alone, so a block of features reads
      // only its own slice of the input.
      const Shape* lhs = ArrayOf(operand_key(0));
      const auto within = [](int64_t d, const Shape& s) { return d >= 0 && d < s.rank(); };
      if (*feature_groups > 1 && *batch_groups == 1 && hlo::IsDepthwiseConvolution(instr) && lhs != nullptr &&
          within(dn->input_feature_dimension, *lhs) && within(dn->output_feature_dimension, shape) &&
          lhs->dimensions(dn->input_feature_dimension) == *feature_groups &&
          shape.dimensions(dn->output_feature_dimension) == *feature_groups) {
        in.pairs.emplace_back(dn->output_feature_dimension, dn->input_feature_dimension);
        in.reach.push_back({});
      }
      edges.push_back(std::move(in));
      break;
    }
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: {
      Result<hlo::BatchNormConfig> config = hlo::GetBatchNormConfig(instr);
      if (!config || instr.operand_count() < 1 || rank_of(0) <= config->feature_index) break;
      const int64_t f = config->feature_index;
      const Key data = operand_key(0);
      const int64_t rank = rank_of(0);
      const bool grad = op == Opcode::kBatchNormGrad;
      edges.push_back(Identity(Key{&instr, shape.IsTuple() ? 0 : -1}, data, rank));
      if (grad && instr.operand_count() >= 5 && rank_of(4) == rank) edges.push_back(Identity(data, operand_key(4), rank));
      const int64_t vectors = grad ? 4 : instr.operand_count();
      for (int64_t i = 1; i < vectors && i < instr.operand_count(); ++i) {
        if (rank_of(i) == 1) edges.push_back(Edge{Edge::Kind::kDims, operand_key(i), data, {{0, f}}, false});
      }
      if (shape.IsTuple()) {
        for (int64_t j = 1; j < static_cast<int64_t>(shape.tuple_shapes().size()); ++j) {
          edges.push_back(Edge{Edge::Kind::kDims, Key{&instr, j}, data, {{0, f}}, false});
        }
      }
      break;
    }
    default:
      break;
  }
  return edges;
}

}  // namespace kiln::runtime::kernel_edges
