// Control flow: while, case, if, func.call and composite (op_handlers.h).
#include <algorithm>

#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// Appends the values of `more` not in `all`.
void Union(std::vector<ValueId>& all, const std::vector<ValueId>& more) {
  for (ValueId v : more) {
    if (std::find(all.begin(), all.end(), v) == all.end()) all.push_back(v);
  }
}

// The tuple of the captured values a branch reads.
Instruction* CaptureTuple(Converter& c, const std::vector<ValueId>& captures) {
  std::vector<Instruction*> elements;
  for (ValueId v : captures) elements.push_back(c.Value(v));
  return c.emit().Tuple(elements);
}


Status BindResults(Converter& c, const Operation& op, Instruction* result) {
  if (op.results.empty()) return Ok();
  return c.SetResults(op, result);
}

}  // namespace

Status ConvertWhile(Converter& c, const Operation& op) {
  if (op.regions.size() != 2) return c.OpError(op, "expected cond and body regions");
  std::vector<ValueId> captures = c.Captures(op.regions[0]);
  Union(captures, c.Captures(op.regions[1]));
  std::vector<Instruction*> state = c.Operands(op);
  for (ValueId v : captures) state.push_back(c.Value(v));
  Instruction* init = c.emit().Tuple(state);
  KILN_ASSIGN_OR_RETURN(Converter::RegionComputation cond,
                        c.ConvertRegion(op.regions[0], "cond", Converter::RegionArgs::kLoopCondition, op, &captures));
  KILN_ASSIGN_OR_RETURN(Converter::RegionComputation body,
                        c.ConvertRegion(op.regions[1], "body", Converter::RegionArgs::kTuple, op, &captures));
  Instruction* loop = c.emit().Add(Opcode::kWhile, init->shape(), {init}, "while");
  loop->AddAttribute(hlo::Attribute::Calls("condition", cond.computation));
  loop->AddAttribute(hlo::Attribute::Calls("body", body.computation));
  for (size_t i = 0; i < op.results.size(); ++i) {
    c.SetValue(op.results[i], c.emit().GetTupleElement(loop, static_cast<int64_t>(i)));
  }
  return Ok();
}

Status ConvertCase(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.regions.empty()) return c.OpError(op, "expected an index and branches");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  if (op.results.empty()) shape = Shape::Tuple({});
  std::vector<Instruction*> operands = {c.Operand(op, 0)};
  std::vector<hlo::Computation*> branches;
  for (size_t b = 0; b < op.regions.size(); ++b) {
    KILN_ASSIGN_OR_RETURN(Converter::RegionComputation branch,
                          c.ConvertRegion(op.regions[b], "branch", Converter::RegionArgs::kBranch, op));
    operands.push_back(CaptureTuple(c, branch.captures));
    branches.push_back(branch.computation);
  }
  Instruction* cond = c.emit().Add(Opcode::kConditional, std::move(shape), operands, "conditional");
  hlo::Attribute attr;
  attr.name = "branch_computations";
  attr.kind = hlo::Attribute::Kind::kComputations;
  attr.braced = true;
  for (hlo::Computation* b : branches) attr.computations.push_back(b);
  cond->AddAttribute(std::move(attr));
  return BindResults(c, op, cond);
}

Status ConvertIf(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.regions.size() != 2) return c.OpError(op, "expected a predicate and two branches");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  if (op.results.empty()) shape = Shape::Tuple({});
  KILN_ASSIGN_OR_RETURN(Converter::RegionComputation t,
                        c.ConvertRegion(op.regions[0], "true_branch", Converter::RegionArgs::kBranch, op));
  KILN_ASSIGN_OR_RETURN(Converter::RegionComputation f,
                        c.ConvertRegion(op.regions[1], "false_branch", Converter::RegionArgs::kBranch, op));
  Instruction* t_args = CaptureTuple(c, t.captures);
  Instruction* f_args = CaptureTuple(c, f.captures);
  Instruction* cond =
      c.emit().Add(Opcode::kConditional, std::move(shape), {c.Operand(op, 0), t_args, f_args}, "conditional");
  cond->AddAttribute(hlo::Attribute::Calls("true_computation", t.computation));
  cond->AddAttribute(hlo::Attribute::Calls("false_computation", f.computation));
  return BindResults(c, op, cond);
}

Status ConvertCall(Converter& c, const Operation& op) {
  const Attr* callee = op.FindAttr("callee");
  if (callee == nullptr || callee->kind != Attr::Kind::kSymbol) return c.OpError(op, "missing callee");
  KILN_ASSIGN_OR_RETURN(hlo::Computation * fn, c.FunctionComputation(callee->text, op));
  if (fn->parameter_count() != static_cast<int64_t>(op.operands.size())) {
    return c.OpError(op, "calls @" + callee->text + " with " + std::to_string(op.operands.size()) +
                             " arguments; it takes " + std::to_string(fn->parameter_count()));
  }
  Instruction* call = c.emit().Add(Opcode::kCall, fn->root()->shape(), c.Operands(op), "call");
  call->AddAttribute(hlo::Attribute::Calls("to_apply", fn));
  return BindResults(c, op, call);
}

Status ConvertComposite(Converter& c, const Operation& op) {
  const Attr* decomposition = op.FindAttr("decomposition");
  if (decomposition == nullptr || decomposition->kind != Attr::Kind::kSymbol) {
    return c.OpError(op, "missing decomposition");
  }
  KILN_ASSIGN_OR_RETURN(hlo::Computation * fn, c.FunctionComputation(decomposition->text, op));
  Instruction* call = c.emit().Add(Opcode::kCall, fn->root()->shape(), c.Operands(op), "call");
  call->AddAttribute(hlo::Attribute::Calls("to_apply", fn));
  const Attr* name = op.FindAttr("name");
  std::string attrs = "{composite.name=\"" + std::string(name != nullptr ? std::string_view(name->text) : "") +
                      "\",composite.version=\"" + std::to_string(BoolAttrValue(op, "version") ? 1 : 0) + "\"}";
  if (const Attr* version = op.FindAttr("version"); version != nullptr && version->kind == Attr::Kind::kInt) {
    attrs = "{composite.name=\"" + std::string(name != nullptr ? std::string_view(name->text) : "") +
            "\",composite.version=\"" + std::to_string(version->i) + "\"}";
  }
  HloEmitter::SetRawAttr(call, "frontend_attributes", attrs);
  return BindResults(c, op, call);
}

}  // namespace kiln::stablehlo::convert_internal
