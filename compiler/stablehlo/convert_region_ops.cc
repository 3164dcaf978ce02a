// Ops with scalar computation bodies: reduce, reduce_window,
// select_and_scatter, sort, scatter, map (op_handlers.h).
#include "compiler/stablehlo/op_handlers.h"
#include "compiler/stablehlo/window_text.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

Result<hlo::Computation*> Body(Converter& c, const Operation& op, size_t region, std::string_view name) {
  if (op.regions.size() <= region) return c.OpError(op, "missing its " + std::string(name) + " region");
  KILN_ASSIGN_OR_RETURN(Converter::RegionComputation r,
                        c.ConvertRegion(op.regions[region], name, Converter::RegionArgs::kScalars, op));
  return r.computation;
}

Status EvenOperands(const Converter& c, const Operation& op) {
  if (op.operands.empty() || op.operands.size() % 2 != 0) {
    return c.OpError(op, "expected inputs and as many init values");
  }
  return Ok();
}

}  // namespace

Status ConvertReduce(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(EvenOperands(c, op));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntListAttr(c, op, "dimensions"));
  KILN_ASSIGN_OR_RETURN(hlo::Computation * body, Body(c, op, 0, "reduce_body"));
  Instruction* r = c.emit().Add(Opcode::kReduce, std::move(shape), c.Operands(op), "reduce");
  HloEmitter::SetAttr(r, "dimensions", IntListText(dims));
  r->AddAttribute(hlo::Attribute::Calls("to_apply", body));
  return c.SetResults(op, r);
}

Status ConvertReduceWindow(Converter& c, const Operation& op) {
  KILN_RETURN_IF_ERROR(EvenOperands(c, op));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  KILN_ASSIGN_OR_RETURN(WindowSpec window, ReadWindow(c, op, "window_dimensions", "window_strides",
                                                      "base_dilations", "window_dilations", "padding", ""));
  KILN_ASSIGN_OR_RETURN(hlo::Computation * body, Body(c, op, 0, "reduce_window_body"));
  Instruction* r = c.emit().Add(Opcode::kReduceWindow, std::move(shape), c.Operands(op), "reduce-window");
  if (!window.sizes.empty()) HloEmitter::SetAttr(r, "window", WindowText(window));
  r->AddAttribute(hlo::Attribute::Calls("to_apply", body));
  return c.SetResults(op, r);
}

Status ConvertSelectAndScatter(Converter& c, const Operation& op) {
  if (op.operands.size() != 3) return c.OpError(op, "expected operand, source and init value");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(WindowSpec window,
                        ReadWindow(c, op, "window_dimensions", "window_strides", "", "", "padding", ""));
  if (window.sizes.empty()) {
    // The window defaults to 1 per dimension.
    window.sizes.assign(static_cast<size_t>(shape.rank()), 1);
    FillWindowDefaults(window);
  }
  KILN_ASSIGN_OR_RETURN(hlo::Computation * select, Body(c, op, 0, "select"));
  KILN_ASSIGN_OR_RETURN(hlo::Computation * scatter, Body(c, op, 1, "scatter"));
  Instruction* s = c.emit().Add(Opcode::kSelectAndScatter, std::move(shape), c.Operands(op), "select-and-scatter");
  HloEmitter::SetAttr(s, "window", WindowText(window));
  s->AddAttribute(hlo::Attribute::Calls("select", select));
  s->AddAttribute(hlo::Attribute::Calls("scatter", scatter));
  return c.SetResults(op, s);
}

Status ConvertSort(Converter& c, const Operation& op) {
  if (op.operands.empty()) return c.OpError(op, "expected operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  KILN_ASSIGN_OR_RETURN(int64_t dim, IntAttrValue(c, op, "dimension", -1));
  const int64_t rank = c.Operand(op, 0)->shape().rank();
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1)) return c.OpError(op, "dimension out of range");
  KILN_ASSIGN_OR_RETURN(hlo::Computation * comparator, Body(c, op, 0, "compare"));
  Instruction* s = c.emit().Add(Opcode::kSort, std::move(shape), c.Operands(op), "sort");
  HloEmitter::SetAttr(s, "dimensions", "{" + std::to_string(dim) + "}");
  if (BoolAttrValue(op, "is_stable")) HloEmitter::SetAttr(s, "is_stable", "true");
  s->AddAttribute(hlo::Attribute::Calls("to_apply", comparator));
  return c.SetResults(op, s);
}

Status ConvertScatter(Converter& c, const Operation& op) {
  if (op.operands.size() < 3 || op.operands.size() % 2 != 1) {
    return c.OpError(op, "expected inputs, indices and as many updates as inputs");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  const TypeTable& types = c.types();
  auto field = [&](std::string_view name) {
    return IntListOf(types, StructField(op, "scatter_dimension_numbers", name));
  };
  const Attr* ivd = StructField(op, "scatter_dimension_numbers", "index_vector_dim");
  std::vector<int64_t> index_vector_dim = ivd == nullptr ? std::vector<int64_t>{0} : IntListOf(types, ivd);
  if (index_vector_dim.size() != 1) return c.OpError(op, "bad index_vector_dim");
  KILN_ASSIGN_OR_RETURN(hlo::Computation * update, Body(c, op, 0, "scatter_update"));
  Instruction* s = c.emit().Add(Opcode::kScatter, std::move(shape), c.Operands(op), "scatter");
  HloEmitter::SetAttr(s, "update_window_dims", IntListText(field("update_window_dims")));
  HloEmitter::SetAttr(s, "inserted_window_dims", IntListText(field("inserted_window_dims")));
  HloEmitter::SetAttr(s, "scatter_dims_to_operand_dims", IntListText(field("scatter_dims_to_operand_dims")));
  std::vector<int64_t> input_batching = field("input_batching_dims");
  std::vector<int64_t> indices_batching = field("scatter_indices_batching_dims");
  if (!input_batching.empty()) HloEmitter::SetAttr(s, "input_batching_dims", IntListText(input_batching));
  if (!indices_batching.empty()) {
    HloEmitter::SetAttr(s, "scatter_indices_batching_dims", IntListText(indices_batching));
  }
  HloEmitter::SetAttr(s, "index_vector_dim", std::to_string(index_vector_dim[0]));
  if (BoolAttrValue(op, "indices_are_sorted")) HloEmitter::SetAttr(s, "indices_are_sorted", "true");
  if (BoolAttrValue(op, "unique_indices")) HloEmitter::SetAttr(s, "unique_indices", "true");
  s->AddAttribute(hlo::Attribute::Calls("to_apply", update));
  return c.SetResults(op, s);
}

Status ConvertMap(Converter& c, const Operation& op) {
  if (op.operands.empty()) return c.OpError(op, "expected operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntListAttr(c, op, "dimensions"));
  KILN_ASSIGN_OR_RETURN(hlo::Computation * body, Body(c, op, 0, "map_body"));
  Instruction* m = c.emit().Add(Opcode::kMap, std::move(shape), c.Operands(op), "map");
  HloEmitter::SetAttr(m, "dimensions", IntListText(dims));
  m->AddAttribute(hlo::Attribute::Calls("to_apply", body));
  return c.SetResults(op, m);
}

}  // namespace kiln::stablehlo::convert_internal
