// Collectives on a single participant and the custom-call targets the
// evaluator knows (annotations, TopK, the builders' math functions). A
// simulated chip is replica 0 of partition 0 and the only member of every
// replica group, so a collective either passes its operand through or
// (collective-permute with no source for this chip) yields zeros. A
// collective whose result shape shows more participants fails as
// "unsupported multi-participant ...".
#include <string>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/custom_call_math.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/interpreter.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsStart(Opcode op) {
  return op == Opcode::kAllReduceStart || op == Opcode::kAllGatherStart ||
         op == Opcode::kCollectivePermuteStart;
}
bool IsDone(Opcode op) {
  return op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone ||
         op == Opcode::kCollectivePermuteDone;
}

bool SameShape(const Value& v, const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    if (!v.is_tuple() || v.elements().size() != shape.tuple_shapes().size()) return false;
    for (size_t i = 0; i < v.elements().size(); ++i) {
      if (!SameShape(v.elements()[i], shape.tuple_shapes(i))) return false;
    }
    return true;
  }
  return !v.is_tuple() && !v.empty() && v.array().shape().dimensions() == shape.dimensions() &&
         v.array().shape().element_type() == shape.element_type();
}

// The operands as one value: the operand itself, or a tuple of several.
Value Combined(std::span<const Value> operands) {
  if (operands.size() == 1) return operands[0];
  return Value::Tuple({operands.begin(), operands.end()});
}

}  // namespace

Result<Value> Interpreter::EvalCollective(const Instruction& instr,
                                          std::span<const Value> operands) {
  const Opcode op = instr.opcode();
  if (operands.empty()) return std::unexpected(InstrError(instr, "needs an operand"));
  if (IsDone(op)) {
    // A start whose shape is the result's (all-reduce-start of several
    // operands) is passed through; a (operand, result, ...) start gives its
    // result element.
    if (!operands[0].is_tuple() || instr.operand(0)->shape().Compatible(instr.shape())) {
      return operands[0];
    }
    if (operands[0].elements().size() < 2) {
      return std::unexpected(InstrError(instr, "start value has no result element"));
    }
    return operands[0].elements()[1];
  }
  // An asynchronous start written with a tuple shape holds (operand, result,
  // ...); otherwise its shape is the result's.
  const bool tuple_start = IsStart(op) && instr.shape().IsTuple() &&
                           !(op == Opcode::kAllReduceStart && operands.size() > 1);
  const hlo::Shape& result_shape = tuple_start ? instr.shape().tuple_shapes(1) : instr.shape();

  Value result;
  switch (op) {
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: {
      KILN_ASSIGN_OR_RETURN(auto pairs, hlo::GetSourceTargetPairs(instr));
      bool receives = false;
      for (auto [source, target] : pairs) receives |= source == 0 && target == 0;
      result = receives ? operands[0] : ZeroValue(result_shape);
      break;
    }
    case Opcode::kRaggedAllToAll:
      return std::unexpected(UnsupportedOpError(instr, "unsupported op ragged-all-to-all"));
    default:
      // all-reduce, all-gather, reduce-scatter, all-to-all and
      // collective-broadcast over a group of one are the identity.
      result = Combined(operands);
      break;
  }
  if (!SameShape(result, result_shape)) {
    return std::unexpected(UnsupportedOpError(
        instr, "unsupported multi-participant " + instr.OpcodeText() + ": result shape " + result_shape.ToString() +
                   " implies more than one participant, and a simulated chip runs one replica"));
  }
  if (!tuple_start) return result;
  std::vector<Value> parts = {operands[0], std::move(result)};
  for (size_t i = 2; i < instr.shape().tuple_shapes().size(); ++i) {
    parts.push_back(ZeroValue(instr.shape().tuple_shapes(i)));
  }
  return Value::Tuple(std::move(parts));
}

Result<Value> Interpreter::EvalCustomCall(const Instruction& instr,
                                          std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(std::string target, hlo::GetStringAttribute(instr, "custom_call_target"));
  // Annotations that move no data on one device.
  if (target == "Sharding" || target == "SPMDFullToShardShape" ||
      target == "SPMDShardToFullShape" || target == "MoveToHost" || target == "MoveToDevice" ||
      target == "annotate_device_placement" || target == "Pin" || target == "Unpin" ||
      target == "AwsNeuronTransferWithStaticRing") {
    if (operands.size() == 1 && SameShape(operands[0], instr.shape())) return operands[0];
    if (operands.size() == 1 && target.starts_with("SPMD")) {
      return std::unexpected(UnsupportedOpError(instr, "unsupported multi-shard " + target +
                                                           ": it changes the shape, so the program "
                                                           "is partitioned over more than one chip"));
    }
  }
  if (target == "AllocateBuffer" && operands.empty()) return ZeroValue(instr.shape());
  if (target == "TopK") return EvalKernelFn(instr, operands, &EvalTopKCustomCall);
  if (MathCustomCallFn math = FindMathCustomCall(target)) {
    if (operands.size() != 1 || operands[0].is_tuple() || operands[0].empty()) {
      return std::unexpected(InstrError(instr, target + " takes one array operand"));
    }
    KILN_ASSIGN_OR_RETURN(hlo::Literal result, math(instr, operands[0].array()));
    return Value::Own(std::move(result));
  }
  return UnimplementedError("unsupported custom-call target \"" + target + "\"");
}

}  // namespace kiln::runtime
