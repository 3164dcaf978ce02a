// Shape inference for elementwise ops: unary, binary, clamp, select and the
// conversions (shape_inference.h).
#include "compiler/hlo/shape_inference.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Str;
using shape_inference_internal::TypeName;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::SameTypeIgnoringFp;
using shape_inference_internal::HigherPrecision;
using shape_inference_internal::Dim;
using shape_inference_internal::MakeArray;
using shape_inference_internal::DimsOf;
using shape_inference_internal::IsScalar;

Result<Shape> InferUnaryShape(Opcode opcode, const Shape& operand) {
  if (opcode == Opcode::kCopy || opcode == Opcode::kDomain) return operand;
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const PrimitiveType t = operand.element_type();
  const bool fp = IsFloatingPoint(t), cx = IsComplex(t), integral = IsInteger(t);
  auto fail = [&](std::string_view expected) {
    return InvalidArgumentError(std::string(OpcodeName(opcode)) + " expects " + std::string(expected) +
                                " operands, got " + TypeName(t));
  };
  auto with_type = [&](PrimitiveType nt) {
    Shape s = operand;
    s.set_element_type(nt);
    return s;
  };
  auto component = [&] {
    return with_type(t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64);
  };
  switch (opcode) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      if (!fp) return fail("floating-point");
      return operand;
    case Opcode::kIsFinite:
      if (!fp) return fail("floating-point");
      return with_type(PrimitiveType::kPred);
    case Opcode::kReal:
    case Opcode::kImag:
      if (cx) return component();
      if (!fp) return fail("floating-point or complex");
      return operand;
    case Opcode::kAbs:
      if (cx) return component();
      if (!fp && !IsSignedInteger(t)) return fail("signed or floating-point");
      return operand;
    case Opcode::kSign:
      if (!fp && !cx && !IsSignedInteger(t)) return fail("signed, floating-point or complex");
      return operand;
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      if (!integral) return fail("integer");
      return operand;
    case Opcode::kNot:
      if (!integral && t != PrimitiveType::kPred) return fail("pred or integer");
      return operand;
    case Opcode::kNegate:
      if (!integral && !fp && !cx) return fail("numeric");
      return operand;
    case Opcode::kConvert:
      return operand;
    default:  // transcendental functions
      if (!fp && !cx) return fail("floating-point or complex");
      return operand;
  }
}

Result<Shape> InferBinaryShape(Opcode opcode, const Shape& lhs, const Shape& rhs) {
  KILN_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  const PrimitiveType lt = lhs.element_type(), rt = rhs.element_type();
  const std::string op(OpcodeName(opcode));
  if (!SameTypeIgnoringFp(lt, rt)) {
    return InvalidArgumentError(op + " operands have different element types: " + Str(lhs) + " and " + Str(rhs));
  }
  if (!SameDimensions(lhs, rhs)) {
    return InvalidArgumentError(op + " operands have different dimensions: " + Str(lhs) + " and " + Str(rhs) +
                                " (implicit broadcast is not allowed in HLO)");
  }
  std::vector<Dim> dims = DimsOf(lhs);
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (IsDynamicDimension(rhs, i)) dims[i].dynamic = true;
  }
  PrimitiveType result = HigherPrecision(lt, rt);
  switch (opcode) {
    case Opcode::kSubtract:
    case Opcode::kAtan2:
    case Opcode::kPower:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      if (lt == PrimitiveType::kPred) return InvalidArgumentError(op + " does not accept pred operands");
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (lt != PrimitiveType::kPred && !IsInteger(lt)) {
        return InvalidArgumentError(op + " expects pred or integer operands, got " + TypeName(lt));
      }
      break;
    case Opcode::kCompare:
      result = PrimitiveType::kPred;
      break;
    case Opcode::kComplex:
      if (lt == PrimitiveType::kF32 && rt == PrimitiveType::kF32) {
        result = PrimitiveType::kC64;
      } else if (lt == PrimitiveType::kF64 && rt == PrimitiveType::kF64) {
        result = PrimitiveType::kC128;
      } else {
        return InvalidArgumentError("complex expects f32 or f64 operands, got " + TypeName(lt));
      }
      break;
    default:
      break;
  }
  return MakeArray(result, dims);
}

Result<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max) {
  KILN_RETURN_IF_ERROR(ExpectArray(min, "clamp min"));
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "clamp operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(max, "clamp max"));
  for (const Shape* bound : {&min, &max}) {
    if (!SameTypeIgnoringFp(bound->element_type(), operand.element_type()) ||
        (!IsScalar(*bound) && !SameDimensions(*bound, operand))) {
      return InvalidArgumentError("clamp bounds must be scalars or match the operand: " + Str(min) + ", " +
                                  Str(operand) + ", " + Str(max));
    }
  }
  return operand;
}

Result<Shape> InferSelectShape(const Shape& pred, const Shape& on_true, const Shape& on_false) {
  KILN_RETURN_IF_ERROR(ExpectArray(pred, "select predicate"));
  KILN_RETURN_IF_ERROR(ExpectArray(on_true, "select on_true"));
  KILN_RETURN_IF_ERROR(ExpectArray(on_false, "select on_false"));
  if (!ShapesCompatible(on_true, on_false, /*ignore_fp_precision=*/true)) {
    return InvalidArgumentError("select operands must have the same shape, got " + Str(on_true) + " and " +
                                Str(on_false));
  }
  if (pred.element_type() != PrimitiveType::kPred) {
    return InvalidArgumentError("select predicate must be pred, got " + Str(pred));
  }
  if (!SameDimensions(pred, on_true)) {
    return InvalidArgumentError("select predicate " + Str(pred) + " must have the dimensions of " + Str(on_true));
  }
  Shape s = on_true;
  s.set_element_type(HigherPrecision(on_true.element_type(), on_false.element_type()));
  return s;
}

Result<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "convert operand"));
  if (!IsArrayType(new_type)) return InvalidArgumentError("cannot convert to " + TypeName(new_type));
  Shape s = operand;
  s.set_element_type(new_type);
  return s;
}

Result<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "bitcast-convert operand"));
  const PrimitiveType old_type = operand.element_type();
  if (!IsArrayType(new_type)) return InvalidArgumentError("cannot bitcast-convert to " + TypeName(new_type));
  if (IsComplex(old_type) != IsComplex(new_type)) {
    return InvalidArgumentError("bitcast-convert between complex and real types: " + TypeName(old_type) + " to " +
                                TypeName(new_type));
  }
  const int in_bits = BitWidth(old_type), out_bits = BitWidth(new_type);
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return InvalidArgumentError("bitcast-convert between types of indivisible widths: " + TypeName(old_type) + " to " +
                                TypeName(new_type));
  }
  std::vector<Dim> dims = DimsOf(operand);
  const int ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
  if (in_bits > out_bits) {
    dims.push_back({ratio, false});
  } else if (in_bits < out_bits) {
    if (dims.empty() || dims.back().size != ratio) {
      return InvalidArgumentError("bitcast-convert from " + Str(operand) + " to " + TypeName(new_type) +
                                  " needs a last dimension of size " + std::to_string(ratio));
    }
    dims.pop_back();
  }
  return MakeArray(new_type, dims);
}

Result<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                          PrimitiveType new_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "stochastic-convert operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(random, "stochastic-convert random bits"));
  if (!IsUnsignedInteger(random.element_type())) {
    return InvalidArgumentError("stochastic-convert random bits must be unsigned, got " + Str(random));
  }
  if (!IsFloatingPoint(operand.element_type())) {
    return InvalidArgumentError("stochastic-convert operand must be floating-point, got " + Str(operand));
  }
  if (BitWidth(operand.element_type()) != BitWidth(random.element_type()) ||
      !SameDimensions(operand, random)) {
    return InvalidArgumentError("stochastic-convert random bits " + Str(random) + " do not match operand " +
                                Str(operand));
  }
  return InferConvertShape(operand, new_type);
}

Result<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                        int64_t mantissa_bits) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "reduce-precision operand"));
  if (!IsFloatingPoint(operand.element_type())) {
    return InvalidArgumentError("reduce-precision expects a floating-point operand, got " + Str(operand));
  }
  if (exponent_bits < 1) return InvalidArgumentError("exponent_bits must be at least 1");
  if (mantissa_bits < 0) return InvalidArgumentError("mantissa_bits must not be negative");
  return operand;
}

}  // namespace kiln::hlo
