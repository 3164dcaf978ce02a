#include "runtime/eval/elementwise_kernel.h"

#include <string>

#include "compiler/hlo/op_attributes.h"

namespace kiln::runtime {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;
namespace ei = elementwise_internal;

// Host storage has one natural-width element per value for these types, so
// bits can be reinterpreted by copying bytes.
bool HasNaturalStorage(PrimitiveType t) {
  return hlo::IsArrayType(t) && hlo::HostByteWidth(t) * 8 == hlo::BitWidth(t);
}

Error NotDefined(const hlo::Instruction& instr, PrimitiveType t) {
  return UnimplementedError("instruction %" + std::string(instr.name()) + ": " + instr.OpcodeText() +
                            " is not defined on " + std::string(hlo::PrimitiveTypeName(t)));
}

// The element type a loop writes for `instr` from operands of type `t`:
// compare and is-finite give pred, complex makes complex numbers, abs, real
// and imag of a complex number give its component type; the rest keep `t`.
PrimitiveType LoopResultType(const hlo::Instruction& instr, PrimitiveType t) {
  switch (instr.opcode()) {
    case Opcode::kCompare:
    case Opcode::kIsFinite:
      return PrimitiveType::kPred;
    case Opcode::kComplex:
      return t == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64;
    case Opcode::kAbs:
    case Opcode::kReal:
    case Opcode::kImag:
      if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
      if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
      return t;
    default:
      return t;
  }
}

// The loops read every data operand (all but select's predicate) as one
// element type and write the type LoopResultType makes of it. Mixed
// precision, which the verifier accepts as XLA's does (an f32 add of an
// f16 operand, a bf16 result of f32 math), would have them read or write
// past the end of the narrower buffer, so it is refused, naming the types.
Status CheckLoopTypes(const hlo::Instruction& instr) {
  const int64_t first = instr.opcode() == Opcode::kSelect ? 1 : 0;
  if (instr.operand_count() <= first) return Ok();
  const PrimitiveType t = instr.operand(first)->shape().element_type();
  for (int64_t i = first + 1; i < instr.operand_count(); ++i) {
    const PrimitiveType other = instr.operand(i)->shape().element_type();
    if (other != t) {
      return UnimplementedError(
          "instruction %" + std::string(instr.name()) + ": " + instr.OpcodeText() + " of " +
          std::string(hlo::PrimitiveTypeName(t)) + " and " + std::string(hlo::PrimitiveTypeName(other)) +
          " operands (mixed precision) is not supported by the evaluator; convert the operands "
          "to one type first");
    }
  }
  const PrimitiveType result = instr.shape().element_type();
  if (result != LoopResultType(instr, t)) {
    return UnimplementedError(
        "instruction %" + std::string(instr.name()) + ": " + instr.OpcodeText() + " of " +
        std::string(hlo::PrimitiveTypeName(t)) + " operands with a " +
        std::string(hlo::PrimitiveTypeName(result)) +
        " result (mixed precision) is not supported by the evaluator; convert the result");
  }
  return Ok();
}

}  // namespace

bool IsElementwiseInstruction(const hlo::Instruction& instr) {
  if (!instr.shape().IsArray()) return false;
  for (const hlo::Instruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return false;
  }
  if (instr.opcode() == Opcode::kBroadcast) {
    return instr.operand_count() == 1 && instr.operand(0)->shape().ElementCount() == 1;
  }
  if (instr.opcode() == Opcode::kBitcastConvert) {
    const PrimitiveType from = instr.operand(0)->shape().element_type();
    const PrimitiveType to = instr.shape().element_type();
    return hlo::BitWidth(from) == hlo::BitWidth(to) && HasNaturalStorage(from) &&
           HasNaturalStorage(to);
  }
  return hlo::IsElementwise(instr.opcode()) && instr.async_wrapped_opcode().empty();
}

Result<ElementwiseKernel> ResolveElementwiseKernel(const hlo::Instruction& instr) {
  const PrimitiveType result = instr.shape().element_type();
  const PrimitiveType operand =
      instr.operand_count() > 0 ? instr.operand(0)->shape().element_type() : result;
  ElementwiseKernel kernel;
  const Opcode opcode = instr.opcode();
  if (opcode != Opcode::kBroadcast && opcode != Opcode::kCopy && opcode != Opcode::kBitcastConvert &&
      opcode != Opcode::kConvert) {
    KILN_RETURN_IF_ERROR(CheckLoopTypes(instr));
  }
  switch (opcode) {
    case Opcode::kBroadcast:
    case Opcode::kCopy:
      // A copy or broadcast into another floating-point type (mixed
      // precision) converts; copying result-width bytes would read past the
      // end of a narrower operand.
      kernel.fn = operand == result ? ei::ResolveCopy(hlo::HostByteWidth(result))
                                    : ei::ResolveConvert(operand, result);
      break;
    case Opcode::kBitcastConvert:
      kernel.fn = ei::ResolveCopy(hlo::HostByteWidth(result));
      break;
    case Opcode::kConvert:
      kernel.fn = ei::ResolveConvert(operand, result);
      break;
    case Opcode::kCompare: {
      KILN_ASSIGN_OR_RETURN(kernel.fn, ei::ResolveCompare(instr));
      break;
    }
    case Opcode::kSelect:
      kernel.fn = ei::ResolveSelect(result);
      break;
    case Opcode::kClamp:
      kernel.fn = ei::ResolveClamp(result);
      break;
    case Opcode::kReducePrecision: {
      KILN_ASSIGN_OR_RETURN(hlo::ReducePrecisionConfig config, hlo::GetReducePrecisionConfig(instr));
      if (config.exponent_bits < 1 || config.mantissa_bits < 0) {
        return InvalidArgumentError("instruction %" + std::string(instr.name()) +
                                    ": reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
      }
      kernel.params.exponent_bits = static_cast<int>(config.exponent_bits);
      kernel.params.mantissa_bits = static_cast<int>(config.mantissa_bits);
      kernel.fn = ei::ResolveReducePrecision(result);
      break;
    }
    default:
      switch (hlo::CategoryOf(instr.opcode())) {
        case hlo::OpcodeCategory::kUnary:
          kernel.fn = ei::ResolveUnary(instr.opcode(), operand, result);
          break;
        case hlo::OpcodeCategory::kBinary:
          kernel.fn = ei::ResolveBinary(instr.opcode(), operand);
          break;
        default:
          break;
      }
  }
  if (kernel.fn == nullptr) return std::unexpected(NotDefined(instr, operand));
  return kernel;
}

}  // namespace kiln::runtime
