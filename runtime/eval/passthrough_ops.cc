// The custom-call targets the evaluator knows: annotations that move no data
// on one device, TopK, the builders' math functions, StableHLO's checks.
#include <string>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/check_calls.h"
#include "runtime/eval/custom_call_math.h"
#include "runtime/eval/evaluator.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/interpreter.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Annotations that move no data on one device.
bool IsAnnotation(std::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
         target == "MoveToHost" || target == "MoveToDevice" || target == "annotate_device_placement" ||
         target == "Pin" || target == "Unpin" || target == "AwsNeuronTransferWithStaticRing";
}

bool SameArrayShape(const Value& v, const hlo::Shape& shape) {
  return !v.is_tuple() && !v.empty() && v.array().shape().dimensions() == shape.dimensions() &&
         v.array().shape().element_type() == shape.element_type();
}

}  // namespace

Result<Value> Interpreter::EvalCustomCall(const Instruction& instr,
                                          std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(std::string target, hlo::GetStringAttribute(instr, "custom_call_target"));
  if (IsAnnotation(target)) {
    if (operands.size() == 1 && SameArrayShape(operands[0], instr.shape())) return operands[0];
    if (operands.size() == 1 && target.starts_with("SPMD")) {
      return std::unexpected(UnsupportedOpError(instr, "unsupported multi-shard " + target +
                                                           ": it changes the shape, so the program "
                                                           "is partitioned over more than one chip"));
    }
  }
  if (target == "AllocateBuffer" && operands.empty()) return ZeroValue(instr.shape());
  if (IsCheckTarget(target)) return EvalCheckCustomCall(instr, target, operands, options_.checks);
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

bool EvaluatorKnowsCustomCall(std::string_view target) {
  return IsAnnotation(target) || IsCheckTarget(target) || target == "AllocateBuffer" || target == "TopK" ||
         FindMathCustomCall(target) != nullptr;
}

Status CheckEvaluable(const hlo::Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      const Opcode op = instr->opcode();
      if (op == Opcode::kSend || op == Opcode::kRecv || op == Opcode::kInfeed || op == Opcode::kOutfeed) {
        return UnsupportedOpError(*instr, "the evaluator cannot run " + instr->OpcodeText() +
                                              ": a simulated chip has no host or peer to exchange data with");
      }
      if (op != Opcode::kCustomCall) continue;
      Result<std::string> target = hlo::GetStringAttribute(*instr, "custom_call_target");
      if (!target) return std::unexpected(target.error());
      if (!EvaluatorKnowsCustomCall(*target)) {
        return UnsupportedOpError(*instr, "the evaluator cannot compute custom-call target \"" + *target +
                                              "\" (a vendor's kernel, whose semantics kiln does not have)");
      }
    }
  }
  return Ok();
}

}  // namespace kiln::runtime
