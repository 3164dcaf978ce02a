#include "compiler/hlo/verifier_opcode_rules.h"

namespace kiln::hlo::verifier_internal {

int FixedArity(Opcode op) {
  switch (CategoryOf(op)) {
    case OpcodeCategory::kUnary:
      return 1;
    case OpcodeCategory::kBinary:
      return 2;
    case OpcodeCategory::kTernary:
      return 3;
    default:
      break;
  }
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kRngGetAndUpdateState:
      return 0;
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kCholesky:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kDomain:
    case Opcode::kFft:
    case Opcode::kGetDimensionSize:
    case Opcode::kGetTupleElement:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kRngBitGenerator:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kWhile:
    case Opcode::kTopK:
    case Opcode::kRecvDone:
    case Opcode::kSendDone:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kOptimizationBarrier:
      return 1;
    case Opcode::kAddDependency:
    case Opcode::kConvolution:
    case Opcode::kGather:
    case Opcode::kPad:
    case Opcode::kRng:
    case Opcode::kSetDimensionSize:
    case Opcode::kTriangularSolve:
    case Opcode::kStochasticConvert:
    case Opcode::kOutfeed:
      return 2;
    case Opcode::kSelectAndScatter:
    case Opcode::kBatchNormTraining:
    case Opcode::kRaggedDot:
      return 3;
    case Opcode::kScaledDot:
      return 4;
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
      return 5;
    case Opcode::kRaggedAllToAll:
      return 6;
    default:
      return -1;
  }
}

int MinArity(Opcode op) {
  switch (op) {
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kConditional:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicReshape:
      return 1;
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kDot:
      return 2;
    case Opcode::kScatter:
      return 3;
    default:
      return 0;
  }
}

bool AllowsMixedOperands(Opcode op) {
  switch (op) {
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kConvolution:
    case Opcode::kDot:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAsyncDone:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncStart:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kCustomCall:
    case Opcode::kDomain:
    case Opcode::kFusion:
    case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kParameter:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kReducePrecision:
    case Opcode::kReduceWindow:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kSort:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

bool IsPassThrough(Opcode op) {
  switch (op) {
    case Opcode::kAddDependency:
    case Opcode::kBitcast:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kCustomCall:
    case Opcode::kDomain:
    case Opcode::kGetTupleElement:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kOptimizationBarrier:
    case Opcode::kParameter:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::hlo::verifier_internal
