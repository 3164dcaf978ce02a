// Ops that run other computations: while, conditional, call, fusion, map,
// and the asynchronous start/update/done wrappers.
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/interpreter.h"
#include "runtime/eval/shape_ops.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;

Result<bool> ReadPredicate(const Instruction& instr, const Value& value) {
  if (value.is_tuple() || value.empty() || value.array().elided() ||
      value.array().shape().element_type() != hlo::PrimitiveType::kPred ||
      value.array().element_count() != 1) {
    return std::unexpected(InstrError(instr, "condition must produce pred[]"));
  }
  return value.array().Get<uint8_t>(0) != 0;
}

}  // namespace

Result<Value> Interpreter::EvalWhile(const Instruction& instr, const Value& init) {
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* condition,
                        hlo::GetCalledComputation(instr, "condition"));
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* body, hlo::GetCalledComputation(instr, "body"));
  active_whiles_.push_back(&instr);
  struct Pop {
    std::vector<const Instruction*>& stack;
    ~Pop() { stack.pop_back(); }
  } pop{active_whiles_};

  Value state = init;
  for (int64_t trips = 0;; ++trips) {
    KILN_RETURN_IF_ERROR(Charge(1));
    KILN_ASSIGN_OR_RETURN(Value keep_going, Run(*condition, std::span<const Value>(&state, 1)));
    KILN_ASSIGN_OR_RETURN(bool more, ReadPredicate(instr, keep_going));
    if (!more) {
      if (options_.control_flow != nullptr) options_.control_flow->WhileFinished(instr, trips);
      return state;
    }
    KILN_ASSIGN_OR_RETURN(Value next, Run(*body, std::span<const Value>(&state, 1)));
    state = std::move(next);
  }
}

Result<Value> Interpreter::EvalConditional(const Instruction& instr,
                                           std::span<const Value> operands) {
  if (operands.empty() || operands[0].is_tuple() || operands[0].empty()) {
    return std::unexpected(InstrError(instr, "conditional needs a pred or s32 selector"));
  }
  const Literal& selector = operands[0].array();
  std::vector<const hlo::Computation*> branches;
  if (instr.FindAttribute("branch_computations") != nullptr) {
    KILN_ASSIGN_OR_RETURN(branches, hlo::GetCalledComputations(instr, "branch_computations"));
  } else {
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* on_true,
                          hlo::GetCalledComputation(instr, "true_computation"));
    KILN_ASSIGN_OR_RETURN(const hlo::Computation* on_false,
                          hlo::GetCalledComputation(instr, "false_computation"));
    branches = {on_true, on_false};
  }
  if (branches.empty() || operands.size() != branches.size() + 1) {
    return std::unexpected(InstrError(instr, "conditional has " + std::to_string(branches.size()) +
                                                 " branches but " +
                                                 std::to_string(operands.size() - 1) +
                                                 " branch operands"));
  }
  size_t branch;
  if (selector.shape().element_type() == hlo::PrimitiveType::kPred) {
    KILN_ASSIGN_OR_RETURN(bool taken, ReadPredicate(instr, operands[0]));
    branch = taken ? 0 : 1;  // true_computation first
  } else {
    Result<int64_t> index = ScalarToInt64(selector);
    if (!index) return std::unexpected(InstrError(instr, "branch index: " + index.error().ToString()));
    // Out-of-range indices run the last branch.
    branch = (*index < 0 || *index >= static_cast<int64_t>(branches.size()))
                 ? branches.size() - 1
                 : static_cast<size_t>(*index);
  }
  if (options_.control_flow != nullptr) options_.control_flow->BranchTaken(instr, branch);
  return Run(*branches[branch], operands.subspan(branch + 1, 1));
}

Result<Value> Interpreter::EvalCalled(const Instruction& instr, std::string_view attribute,
                                      std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* callee,
                        hlo::GetCalledComputation(instr, attribute));
  return Run(*callee, operands);
}

Result<Value> Interpreter::EvalMap(const Instruction& instr, std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* fn, hlo::GetCalledComputation(instr, "to_apply"));
  const hlo::Shape& shape = instr.shape();
  const int64_t count = shape.ElementCount();
  for (const Value& v : operands) {
    if (v.is_tuple() || v.empty() || v.array().element_count() != count) {
      return std::unexpected(InstrError(instr, "map operands must be arrays of the result's size"));
    }
  }
  Literal out(shape);
  const int64_t out_width = hlo::HostByteWidth(shape.element_type());
  std::vector<Literal> scalars;
  for (const Value& v : operands) scalars.emplace_back(hlo::Shape(v.array().shape().element_type(), {}));
  std::vector<const Literal*> args;
  for (const Literal& s : scalars) args.push_back(&s);
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      const int64_t w = static_cast<int64_t>(scalars[k].data().size());
      std::memcpy(scalars[k].mutable_data().data(), operands[k].array().data().data() + i * w, w);
    }
    KILN_ASSIGN_OR_RETURN(Literal r, Call(*fn, args));
    if (static_cast<int64_t>(r.data().size()) != out_width) {
      return std::unexpected(InstrError(instr, "to_apply must return a scalar of the result type"));
    }
    std::memcpy(out.mutable_data().data() + i * out_width, r.data().data(), out_width);
  }
  return Value::Own(std::move(out));
}

Result<Value> Interpreter::EvalAsync(const Instruction& instr, std::span<const Value> operands) {
  const hlo::Shape& shape = instr.shape();
  switch (instr.opcode()) {
    case Opcode::kAsyncUpdate:
      if (operands.empty()) return std::unexpected(InstrError(instr, "needs an operand"));
      return operands[0];
    case Opcode::kAsyncDone:
    case Opcode::kCopyDone:
      // The start's value is (operands, result, context...).
      if (operands.empty()) return std::unexpected(InstrError(instr, "needs an operand"));
      if (!operands[0].is_tuple()) return operands[0];
      if (operands[0].elements().size() < 2) {
        return std::unexpected(InstrError(instr, "start value has no result element"));
      }
      return operands[0].elements()[1];
    case Opcode::kCopyStart: {
      if (operands.size() != 1 || !shape.IsTuple() || shape.tuple_shapes().size() < 2) {
        return std::unexpected(InstrError(instr, "copy-start takes one operand and makes a tuple"));
      }
      std::vector<Value> parts = {operands[0], operands[0]};
      for (size_t i = 2; i < shape.tuple_shapes().size(); ++i) {
        parts.push_back(ZeroValue(shape.tuple_shapes(i)));
      }
      return Value::Tuple(std::move(parts));
    }
    default:
      break;
  }
  // async-start: run the wrapped op (`negate-start`) or the called
  // computation (`calls=`) now, and hold its result in element 1.
  if (!shape.IsTuple() || shape.tuple_shapes().size() < 2) {
    return std::unexpected(InstrError(instr, "async-start must produce (operands, result, ...)"));
  }
  Value result;
  if (!instr.async_wrapped_opcode().empty()) {
    std::optional<Opcode> wrapped = hlo::OpcodeFromName(instr.async_wrapped_opcode());
    if (!wrapped) return std::unexpected(InstrError(instr, "unknown wrapped op"));
    hlo::InstructionPtr op = Instruction::Create(*wrapped, shape.tuple_shapes(1),
                                                          instr.operands(), instr.name());
    for (const hlo::Attribute& a : instr.attributes()) op->AddAttribute(a);
    KILN_ASSIGN_OR_RETURN(result, EvalInstruction(*op, operands));
  } else {
    KILN_ASSIGN_OR_RETURN(result, EvalCalled(instr, "calls", operands));
  }
  std::vector<Value> parts = {Value::Tuple({operands.begin(), operands.end()}), std::move(result)};
  for (size_t i = 2; i < shape.tuple_shapes().size(); ++i) {
    parts.push_back(ZeroValue(shape.tuple_shapes(i)));
  }
  return Value::Tuple(std::move(parts));
}

}  // namespace kiln::runtime
