// Shape and data-movement ops (op_handlers.h).
#include <algorithm>

#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

Status ExpectOperands(const Converter& c, const Operation& op, size_t n) {
  if (op.operands.size() != n) {
    return c.OpError(op, "expected " + std::to_string(n) + " operands, got " + std::to_string(op.operands.size()));
  }
  return Ok();
}

// Every value of `dims` in [0, bound), each once when `distinct`.
bool DimsInRange(std::span<const int64_t> dims, int64_t bound, bool distinct) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(bound, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= bound) return false;
    if (distinct && seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

}  // namespace

Status ConvertBroadcastInDim(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntListAttr(c, op, "broadcast_dimensions"));
  Result<Instruction*> b = c.emit().BroadcastInDim(c.Operand(op, 0), shape, dims);
  if (!b) return c.OpError(op, b.error().message);
  return c.SetResults(op, *b);
}

Status ConvertBroadcast(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, IntListAttr(c, op, "broadcast_sizes"));
  Instruction* x = c.Operand(op, 0);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x->shape().rank(); ++i) dims.push_back(static_cast<int64_t>(sizes.size()) + i);
  if (static_cast<int64_t>(sizes.size()) + x->shape().rank() != shape.rank()) {
    return c.OpError(op, "broadcast_sizes do not fit the result rank");
  }
  Instruction* b = c.emit().Add(Opcode::kBroadcast, std::move(shape), {x});
  HloEmitter::SetAttr(b, "dimensions", IntListText(dims));
  return c.SetResults(op, b);
}

Status ConvertReshape(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  return c.SetResults(op, c.emit().Add(Opcode::kReshape, std::move(shape), {c.Operand(op, 0)}));
}

Status ConvertTranspose(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, IntListAttr(c, op, "permutation"));
  if (!DimsInRange(perm, shape.rank(), true) || static_cast<int64_t>(perm.size()) != shape.rank()) {
    return c.OpError(op, "permutation is not a permutation of the dimensions");
  }
  Instruction* t = c.emit().Add(Opcode::kTranspose, std::move(shape), {c.Operand(op, 0)});
  HloEmitter::SetAttr(t, "dimensions", IntListText(perm));
  return c.SetResults(op, t);
}

Status ConvertReverse(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntListAttr(c, op, "dimensions"));
  if (!DimsInRange(dims, shape.rank(), true)) return c.OpError(op, "dimensions out of range");
  Instruction* r = c.emit().Add(Opcode::kReverse, std::move(shape), {c.Operand(op, 0)});
  HloEmitter::SetAttr(r, "dimensions", IntListText(dims));
  return c.SetResults(op, r);
}

Status ConvertSlice(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, IntListAttr(c, op, "start_indices"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> limits, IntListAttr(c, op, "limit_indices"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntListAttr(c, op, "strides", false));
  if (strides.empty()) strides.assign(starts.size(), 1);
  if (starts.size() != limits.size() || starts.size() != strides.size() ||
      static_cast<int64_t>(starts.size()) != shape.rank()) {
    return c.OpError(op, "slice ranges do not match the rank");
  }
  std::string text = "{";
  for (size_t i = 0; i < starts.size(); ++i) {
    if (i > 0) text += ',';
    text += "[" + std::to_string(starts[i]) + ":" + std::to_string(limits[i]);
    if (strides[i] != 1) text += ":" + std::to_string(strides[i]);
    text += "]";
  }
  text += "}";
  Instruction* s = c.emit().Add(Opcode::kSlice, std::move(shape), {c.Operand(op, 0)});
  HloEmitter::SetAttr(s, "slice", text);
  return c.SetResults(op, s);
}

Status ConvertDynamicSlice(Converter& c, const Operation& op) {
  if (op.operands.empty()) return c.OpError(op, "expected operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, IntListAttr(c, op, "slice_sizes"));
  if (op.operands.size() == 2 && c.Operand(op, 1)->shape().rank() == 1) {
    return c.Unsupported(op, "start indices as one tensor are not supported");
  }
  Instruction* s = c.emit().Add(Opcode::kDynamicSlice, std::move(shape), c.Operands(op));
  HloEmitter::SetAttr(s, "dynamic_slice_sizes", IntListText(sizes));
  return c.SetResults(op, s);
}

Status ConvertDynamicUpdateSlice(Converter& c, const Operation& op) {
  if (op.operands.size() < 2) return c.OpError(op, "expected operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  return c.SetResults(op, c.emit().Add(Opcode::kDynamicUpdateSlice, std::move(shape), c.Operands(op)));
}

Status ConvertConcatenate(Converter& c, const Operation& op) {
  if (op.operands.empty()) return c.OpError(op, "expected operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(int64_t dim, IntAttrValue(c, op, "dimension"));
  if (dim < 0 || dim >= shape.rank()) return c.OpError(op, "dimension out of range");
  Instruction* cat = c.emit().Add(Opcode::kConcatenate, std::move(shape), c.Operands(op));
  HloEmitter::SetAttr(cat, "dimensions", "{" + std::to_string(dim) + "}");
  return c.SetResults(op, cat);
}

Status ConvertPad(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 2));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> low, IntListAttr(c, op, "edge_padding_low"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> high, IntListAttr(c, op, "edge_padding_high"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> interior, IntListAttr(c, op, "interior_padding"));
  if (low.size() != high.size() || low.size() != interior.size() ||
      static_cast<int64_t>(low.size()) != shape.rank()) {
    return c.OpError(op, "padding does not match the rank");
  }
  std::string text;
  for (size_t i = 0; i < low.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(low[i]) + "_" + std::to_string(high[i]);
    if (interior[i] != 0) text += "_" + std::to_string(interior[i]);
  }
  Instruction* p = c.emit().Add(Opcode::kPad, std::move(shape), c.Operands(op));
  HloEmitter::SetAttr(p, "padding", text);
  return c.SetResults(op, p);
}

Status ConvertTuple(Converter& c, const Operation& op) {
  std::vector<Instruction*> elements = c.Operands(op);
  return c.SetResults(op, c.emit().Tuple(elements));
}

Status ConvertGetTupleElement(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(int64_t index, IntAttrValue(c, op, "index"));
  Instruction* t = c.Operand(op, 0);
  if (!t->shape().IsTuple() || index < 0 || index >= static_cast<int64_t>(t->shape().tuple_shapes().size())) {
    return c.OpError(op, "tuple index out of range");
  }
  return c.SetResults(op, c.emit().GetTupleElement(t, index));
}

Status ConvertOptimizationBarrier(Converter& c, const Operation& op) {
  std::vector<Instruction*> operands = c.Operands(op);
  Instruction* tuple = c.emit().Tuple(operands);
  Instruction* barrier = c.emit().Add(Opcode::kOptimizationBarrier, tuple->shape(), {tuple});
  if (op.results.size() == 1) return c.SetResults(op, c.emit().GetTupleElement(barrier, 0));
  return c.SetResults(op, barrier);
}

Result<ConfigPairs> GatherAttributes(const Converter& c, const Operation& op) {
  const TypeTable& types = c.types();
  auto field = [&](std::string_view name) { return IntListOf(types, StructField(op, "dimension_numbers", name)); };
  const std::vector<int64_t> operand_batching = field("operand_batching_dims");
  const std::vector<int64_t> indices_batching = field("start_indices_batching_dims");
  const Attr* ivd = StructField(op, "dimension_numbers", "index_vector_dim");
  const std::vector<int64_t> index_vector_dim = ivd == nullptr ? std::vector<int64_t>{0} : IntListOf(types, ivd);
  if (index_vector_dim.size() != 1) return c.OpError(op, "bad index_vector_dim");
  ConfigPairs out = {{"offset_dims", IntListText(field("offset_dims"))},
                     {"collapsed_slice_dims", IntListText(field("collapsed_slice_dims"))},
                     {"start_index_map", IntListText(field("start_index_map"))}};
  if (!operand_batching.empty()) out.emplace_back("operand_batching_dims", IntListText(operand_batching));
  if (!indices_batching.empty()) out.emplace_back("start_indices_batching_dims", IntListText(indices_batching));
  out.emplace_back("index_vector_dim", std::to_string(index_vector_dim[0]));
  if (BoolAttrValue(op, "indices_are_sorted")) out.emplace_back("indices_are_sorted", "true");
  return out;
}

Status ConvertGather(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 2));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(ConfigPairs attributes, GatherAttributes(c, op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, IntListAttr(c, op, "slice_sizes"));
  Instruction* g = c.emit().Add(Opcode::kGather, std::move(shape), c.Operands(op));
  for (const auto& [name, value] : attributes) HloEmitter::SetAttr(g, name, value);
  HloEmitter::SetAttr(g, "slice_sizes", IntListText(slice_sizes));
  return c.SetResults(op, g);
}

Status ConvertGetDimensionSize(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 1));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(int64_t dim, IntAttrValue(c, op, "dimension"));
  Instruction* x = c.Operand(op, 0);
  if (dim < 0 || dim >= x->shape().rank()) return c.OpError(op, "dimension out of range");
  // A static dimension's size is a constant, as XLA folds it.
  if (!x->shape().is_dynamic_dimension(dim)) {
    return c.SetResults(op, c.emit().ScalarConstant(shape.element_type(),
                                                    static_cast<double>(x->shape().dimensions(dim))));
  }
  Instruction* g = c.emit().Add(Opcode::kGetDimensionSize, Shape(hlo::PrimitiveType::kS32, {}), {x});
  HloEmitter::SetAttr(g, "dimensions", "{" + std::to_string(dim) + "}");
  return c.SetResults(op, c.emit().Convert(g, shape.element_type()));
}

Status ConvertSetDimensionSize(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 2));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(int64_t dim, IntAttrValue(c, op, "dimension"));
  Instruction* s = c.emit().Add(Opcode::kSetDimensionSize, std::move(shape),
                                {c.Operand(op, 0), c.emit().Convert(c.Operand(op, 1), hlo::PrimitiveType::kS32)});
  HloEmitter::SetAttr(s, "dimensions", "{" + std::to_string(dim) + "}");
  return c.SetResults(op, s);
}

}  // namespace kiln::stablehlo::convert_internal
