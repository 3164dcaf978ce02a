#include "runtime/chip/op_kinds.h"

namespace kiln::runtime {

VectorOpKind VectorOpKindOf(hlo::Opcode op) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kCbrt:
      return VectorOpKind::kMultiStep;
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kTanh:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kAtan2:
    case Opcode::kErf:
    case Opcode::kPower:
    case Opcode::kAsin:
    case Opcode::kAcos:
    case Opcode::kAsinh:
    case Opcode::kAcosh:
    case Opcode::kAtanh:
    case Opcode::kSinh:
    case Opcode::kCosh:
      return VectorOpKind::kTranscendental;
    default:
      return VectorOpKind::kSimple;
  }
}

double MxuPeakRate(const ChipSpec& chip, hlo::PrimitiveType lhs, hlo::PrimitiveType rhs) {
  auto narrow = [](hlo::PrimitiveType t) { return hlo::BitWidth(t) <= 8; };
  if (!narrow(lhs) || !narrow(rhs)) return chip.bf16_flops;
  if (hlo::IsInteger(lhs) && hlo::IsInteger(rhs)) return chip.int8_ops;
  if (hlo::IsFloatingPoint(lhs) && hlo::IsFloatingPoint(rhs)) return chip.fp8_flops;
  return chip.bf16_flops;
}

int MxuPasses(hlo::Precision precision) {
  switch (precision) {
    case hlo::Precision::kHigh: return 3;
    case hlo::Precision::kHighest: return 6;
    default: return 1;
  }
}

}  // namespace kiln::runtime
