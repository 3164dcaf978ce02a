// Shape inference for instructions that call computations: while,
// conditional, call and fusion (shape_inference_util.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo::shape_inference_internal {
namespace {

Status ExpectSameShape(const Shape& actual, const Shape& expected, const std::string& what) {
  if (!ShapesCompatible(actual, expected)) {
    return InvalidArgumentError(what + " " + actual.ToString() + " does not match " + expected.ToString());
  }
  return Ok();
}

}  // namespace

Result<ProgramShape> CalleeShape(const Instruction& instr, std::string_view attr) {
  KILN_ASSIGN_OR_RETURN(const Computation* c, GetCalledComputation(instr, attr));
  return GetProgramShape(*c);
}

Result<Shape> InferWhile(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(ProgramShape cond, CalleeShape(instr, "condition"));
  KILN_ASSIGN_OR_RETURN(ProgramShape body, CalleeShape(instr, "body"));
  if (cond.parameters.size() != 1 || body.parameters.size() != 1) {
    return InvalidArgumentError("while condition and body must take exactly one parameter");
  }
  if (!ShapesCompatible(cond.result, Shape(PrimitiveType::kPred, {}))) {
    return InvalidArgumentError("while condition must return pred[], returns " + cond.result.ToString());
  }
  const Shape& init = instr.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectSameShape(init, body.parameters[0], "operand"));
  KILN_RETURN_IF_ERROR(ExpectSameShape(init, cond.parameters[0], "operand"));
  KILN_RETURN_IF_ERROR(ExpectSameShape(body.result, body.parameters[0], "body result"));
  return body.result;
}

Result<Shape> InferConditional(const Instruction& instr) {
  std::vector<const Computation*> branches;
  if (instr.FindAttribute("branch_computations") != nullptr) {
    KILN_ASSIGN_OR_RETURN(branches, GetCalledComputations(instr, "branch_computations"));
  } else {
    KILN_ASSIGN_OR_RETURN(const Computation* t, GetCalledComputation(instr, "true_computation"));
    KILN_ASSIGN_OR_RETURN(const Computation* f, GetCalledComputation(instr, "false_computation"));
    branches = {t, f};
  }
  const Shape& selector = instr.operand(0)->shape();
  const bool scalar = IsScalar(selector);
  if (scalar && selector.element_type() == PrimitiveType::kPred) {
    if (branches.size() != 2) return InvalidArgumentError("a pred selector needs exactly 2 branches");
  } else if (!scalar || selector.element_type() != PrimitiveType::kS32) {
    return InvalidArgumentError("selector must be pred[] or s32[], got " + selector.ToString());
  }
  if (branches.empty()) return InvalidArgumentError("conditional has no branches");
  if (instr.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return InvalidArgumentError("conditional with " + std::to_string(branches.size()) + " branches needs " +
                                std::to_string(branches.size() + 1) + " operands, has " +
                                std::to_string(instr.operand_count()));
  }
  Shape result;
  for (size_t j = 0; j < branches.size(); ++j) {
    KILN_ASSIGN_OR_RETURN(ProgramShape b, GetProgramShape(*branches[j]));
    if (b.parameters.size() != 1) {
      return InvalidArgumentError("branch %" + branches[j]->name() + " must take one parameter");
    }
    KILN_RETURN_IF_ERROR(ExpectSameShape(instr.operand(j + 1)->shape(), b.parameters[0],
                                         "operand " + std::to_string(j + 1)));
    if (j == 0) {
      result = b.result;
    } else {
      KILN_RETURN_IF_ERROR(
          ExpectSameShape(b.result, result, "result of branch %" + branches[j]->name()));
    }
  }
  return result;
}

// call and fusion: parameters match operands, the root is the result.
// Fusions may leave trailing operands unused, as XLA allows.
Result<Shape> InferCallLike(const Instruction& instr, std::string_view attr, bool fewer_params_ok) {
  KILN_ASSIGN_OR_RETURN(const Computation* c, GetCalledComputation(instr, attr));
  KILN_ASSIGN_OR_RETURN(ProgramShape ps, GetProgramShape(*c));
  const size_t n = ps.parameters.size(), ops = static_cast<size_t>(instr.operand_count());
  if (fewer_params_ok ? n > ops : n != ops) {
    return InvalidArgumentError("computation %" + c->name() + " takes " + std::to_string(n) +
                                " parameters but the instruction has " + std::to_string(ops) + " operands");
  }
  for (size_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(
        ExpectSameShape(instr.operand(i)->shape(), ps.parameters[i],
                        "operand " + std::to_string(i) + " (parameter of %" + c->name() + ")"));
  }
  return ps.result;
}

}  // namespace kiln::hlo::shape_inference_internal
