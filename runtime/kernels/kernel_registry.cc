#include "runtime/kernels/kernels.h"

namespace kiln::runtime {

KernelFn FindHeavyKernel(hlo::Opcode opcode) {
  switch (opcode) {
    case hlo::Opcode::kDot: return EvalDot;
    case hlo::Opcode::kConvolution: return EvalConvolution;
    case hlo::Opcode::kReduce: return EvalReduce;
    case hlo::Opcode::kGather: return EvalGather;
    case hlo::Opcode::kScatter: return EvalScatter;
    case hlo::Opcode::kSort: return EvalSort;
    case hlo::Opcode::kFft: return EvalFft;
    case hlo::Opcode::kRng: return EvalRng;
    case hlo::Opcode::kRngBitGenerator: return EvalRngBitGenerator;
    case hlo::Opcode::kReduceWindow: return EvalReduceWindow;
    case hlo::Opcode::kSelectAndScatter: return EvalSelectAndScatter;
    case hlo::Opcode::kCholesky: return EvalCholesky;
    case hlo::Opcode::kTriangularSolve: return EvalTriangularSolve;
    case hlo::Opcode::kBatchNormTraining: return EvalBatchNormTraining;
    case hlo::Opcode::kBatchNormInference: return EvalBatchNormInference;
    case hlo::Opcode::kBatchNormGrad: return EvalBatchNormGrad;
    case hlo::Opcode::kTopK: return EvalTopK;
    default:
      return nullptr;
  }
}

}  // namespace kiln::runtime
