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
  Instruction* x = c.Operand(op, 0);
  const Shape& in = x->shape();
  if (static_cast<int64_t>(dims.size()) != in.rank() || !DimsInRange(dims, shape.rank(), true)) {
    return c.OpError(op, "broadcast_dimensions do not fit the operand and result ranks");
  }
  // HLO's broadcast keeps every operand dimension whole: size-1 dimensions
  // that expand are reshaped away first, as XLA's BroadcastInDim does.
  std::vector<int64_t> kept_dims, kept_sizes;
  bool collapse = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t from = in.dimensions(static_cast<int64_t>(i));
    const int64_t to = shape.dimensions(dims[i]);
    if (from == 1 && to != 1) {
      collapse = true;
      continue;
    }
    if (from != to && from != hlo::kUnboundedDim && to != hlo::kUnboundedDim) {
      return c.OpError(op, "operand dimension " + std::to_string(i) + " of size " + std::to_string(from) +
                               " cannot broadcast to " + std::to_string(to));
    }
    kept_dims.push_back(dims[i]);
    kept_sizes.push_back(from);
  }
  if (collapse) x = c.emit().Reshape(x, Shape(in.element_type(), kept_sizes));
  Instruction* b = c.emit().Add(Opcode::kBroadcast, std::move(shape), {x});
  HloEmitter::SetAttr(b, "dimensions", IntListText(kept_dims));
  return c.SetResults(op, b);
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

Status ConvertGather(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(ExpectOperands(c, op, 2));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  const TypeTable& types = c.types();
  auto field = [&](std::string_view name) { return IntListOf(types, StructField(op, "dimension_numbers", name)); };
  std::vector<int64_t> offset_dims = field("offset_dims");
  std::vector<int64_t> collapsed = field("collapsed_slice_dims");
  std::vector<int64_t> operand_batching = field("operand_batching_dims");
  std::vector<int64_t> indices_batching = field("start_indices_batching_dims");
  std::vector<int64_t> start_index_map = field("start_index_map");
  const Attr* ivd = StructField(op, "dimension_numbers", "index_vector_dim");
  std::vector<int64_t> index_vector_dim = ivd == nullptr ? std::vector<int64_t>{0} : IntListOf(types, ivd);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, IntListAttr(c, op, "slice_sizes"));
  if (index_vector_dim.size() != 1) return c.OpError(op, "bad index_vector_dim");
  Instruction* g = c.emit().Add(Opcode::kGather, std::move(shape), c.Operands(op));
  HloEmitter::SetAttr(g, "offset_dims", IntListText(offset_dims));
  HloEmitter::SetAttr(g, "collapsed_slice_dims", IntListText(collapsed));
  HloEmitter::SetAttr(g, "start_index_map", IntListText(start_index_map));
  if (!operand_batching.empty()) HloEmitter::SetAttr(g, "operand_batching_dims", IntListText(operand_batching));
  if (!indices_batching.empty()) {
    HloEmitter::SetAttr(g, "start_indices_batching_dims", IntListText(indices_batching));
  }
  HloEmitter::SetAttr(g, "index_vector_dim", std::to_string(index_vector_dim[0]));
  HloEmitter::SetAttr(g, "slice_sizes", IntListText(slice_sizes));
  if (BoolAttrValue(op, "indices_are_sorted")) HloEmitter::SetAttr(g, "indices_are_sorted", "true");
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
