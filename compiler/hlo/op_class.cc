#include "compiler/hlo/op_class.h"

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/opcode.h"

namespace kiln::hlo {

OpClass ClassOf(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return OpClass::kFree;
    default:
      break;
  }
  if (!instr.shape().IsArray()) return OpClass::kOpaque;
  if (IsElementwise(instr.opcode())) return OpClass::kElementwise;
  switch (instr.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kIota:
      return OpClass::kBroadcast;
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kDynamicSlice:
    case Opcode::kBitcastConvert:
      return OpClass::kDataMovement;
    case Opcode::kReduce:
      return OpClass::kReduce;
    case Opcode::kDot:
      return OpClass::kContraction;
    case Opcode::kConvolution:
      return IsWindowOp(instr) ? OpClass::kWindow : OpClass::kContraction;
    case Opcode::kReduceWindow:
      return IsWindowOp(instr) ? OpClass::kWindow : OpClass::kOpaque;
    default:
      return OpClass::kOpaque;
  }
}

bool IsDepthwiseConvolution(const Instruction& instr) {
  if (instr.opcode() != Opcode::kConvolution || instr.operand_count() < 2) return false;
  Result<int64_t> groups = GetFeatureGroupCount(instr);
  Result<int64_t> batch_groups = GetBatchGroupCount(instr);
  Result<ConvolutionDimensionNumbers> dn = GetConvolutionDimensionNumbers(instr);
  const Shape& kernel = instr.operand(1)->shape();
  if (!groups || !batch_groups || !dn || *groups <= 1 || *batch_groups != 1 || !kernel.IsArray() ||
      dn->kernel_input_feature_dimension < 0 || dn->kernel_input_feature_dimension >= kernel.rank()) {
    return false;
  }
  return kernel.dimensions(dn->kernel_input_feature_dimension) == 1;
}

bool IsDepthwiseFilterGradient(const Instruction& instr) {
  if (instr.opcode() != Opcode::kConvolution || instr.operand_count() < 2 || !instr.shape().IsArray())
    return false;
  Result<int64_t> groups = GetFeatureGroupCount(instr);
  Result<int64_t> batch_groups = GetBatchGroupCount(instr);
  Result<ConvolutionDimensionNumbers> dn = GetConvolutionDimensionNumbers(instr);
  const Shape& kernel = instr.operand(1)->shape();
  if (!groups || !batch_groups || !dn || *groups != 1 || *batch_groups <= 1 || !kernel.IsArray() ||
      dn->kernel_output_feature_dimension < 0 || dn->kernel_output_feature_dimension >= kernel.rank() ||
      dn->output_feature_dimension < 0 || dn->output_feature_dimension >= instr.shape().rank()) {
    return false;
  }
  return kernel.dimensions(dn->kernel_output_feature_dimension) == *batch_groups &&
         instr.shape().dimensions(dn->output_feature_dimension) == *batch_groups;
}

bool IsWindowOp(const Instruction& instr) {
  if (instr.opcode() == Opcode::kConvolution)
    return IsDepthwiseConvolution(instr) || IsDepthwiseFilterGradient(instr);
  return instr.opcode() == Opcode::kReduceWindow && instr.operand_count() == 2 && instr.shape().IsArray();
}

bool IsLoopFusible(const Instruction& instr) {
  OpClass c = ClassOf(instr);
  return c == OpClass::kElementwise || c == OpClass::kBroadcast || c == OpClass::kDataMovement;
}

}  // namespace kiln::hlo
