// Shape inference for linear algebra and normalisation: cholesky,
// triangular-solve, top-k and the batch-norm ops (shape_inference.h).
#include "compiler/hlo/shape_inference.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Str;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::InRange;
using shape_inference_internal::SameTypeIgnoringFp;
using shape_inference_internal::Dim;
using shape_inference_internal::DimOf;
using shape_inference_internal::MakeArray;
using shape_inference_internal::DimsOf;
using shape_inference_internal::SizesMatch;

Result<Shape> InferCholeskyShape(const Shape& a) {
  KILN_RETURN_IF_ERROR(ExpectArray(a, "cholesky operand"));
  if (!IsFloatingPoint(a.element_type()) && !IsComplex(a.element_type())) {
    return InvalidArgumentError("cholesky needs a floating-point or complex operand, got " + Str(a));
  }
  if (a.rank() < 2 || !SizesMatch(a, a.rank() - 2, a, a.rank() - 1)) {
    return InvalidArgumentError("cholesky operand " + Str(a) + " must end in a square matrix");
  }
  return a;
}

Result<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                        const TriangularSolveOptions& options) {
  KILN_RETURN_IF_ERROR(InferCholeskyShape(a));
  KILN_RETURN_IF_ERROR(ExpectArray(b, "triangular-solve b"));
  if (a.element_type() != b.element_type() || a.rank() != b.rank()) {
    return InvalidArgumentError("triangular-solve operands " + Str(a) + " and " + Str(b) +
                                " must have equal rank and element type");
  }
  const int64_t r = a.rank();
  if (!SizesMatch(a, r - 1, b, options.left_side ? r - 2 : r - 1)) {
    return InvalidArgumentError("triangular-solve shared dimension of " + Str(a) + " and " + Str(b) +
                                " does not match");
  }
  for (int64_t i = 0; i + 2 < r; ++i) {
    if (!SizesMatch(a, i, b, i)) {
      return InvalidArgumentError("triangular-solve batch dimensions of " + Str(a) + " and " + Str(b) + " differ");
    }
  }
  return b;
}

Result<Shape> InferTopKShape(const Shape& operand, int64_t k) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "topk operand"));
  if (operand.rank() < 1) return InvalidArgumentError("topk operand must have rank >= 1");
  const int64_t last = operand.rank() - 1;
  if (k < 0 || (!IsDynamicDimension(operand, last) && operand.dimensions(last) < k)) {
    return InvalidArgumentError("topk k=" + std::to_string(k) + " is out of range for " + Str(operand));
  }
  std::vector<Dim> dims = DimsOf(operand);
  dims.back() = {k, false};
  KILN_ASSIGN_OR_RETURN(Shape values, MakeArray(operand.element_type(), dims));
  KILN_ASSIGN_OR_RETURN(Shape indices, MakeArray(PrimitiveType::kS32, dims));
  return Shape::Tuple({values, indices});
}

Result<Shape> InferBatchNormShape(Opcode opcode, std::span<const Shape> operands,
                                  int64_t feature_index) {
  const size_t expected = opcode == Opcode::kBatchNormTraining ? 3 : 5;
  if (operands.size() != expected) {
    return InvalidArgumentError(std::string(OpcodeName(opcode)) + " takes " + std::to_string(expected) + " operands");
  }
  const Shape& operand = operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "batch-norm operand"));
  if (!IsFloatingPoint(operand.element_type())) {
    return InvalidArgumentError("batch-norm operand must be floating-point, got " + Str(operand));
  }
  if (!InRange(feature_index, operand.rank())) {
    return InvalidArgumentError("feature_index " + std::to_string(feature_index) + " is out of range for " +
                                Str(operand));
  }
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& s = operands[i];
    const bool full = opcode == Opcode::kBatchNormGrad && i == 4;  // grad_output
    KILN_RETURN_IF_ERROR(ExpectArray(s, "batch-norm operand " + std::to_string(i)));
    if (!SameTypeIgnoringFp(s.element_type(), operand.element_type())) {
      return InvalidArgumentError("batch-norm operand " + std::to_string(i) + " " + Str(s) +
                                  " does not match the element type of " + Str(operand));
    }
    if (full ? !SameDimensions(s, operand)
             : (s.rank() != 1 || !SizesMatch(s, 0, operand, feature_index))) {
      return InvalidArgumentError("batch-norm operand " + std::to_string(i) + " " + Str(s) +
                                  " does not match the feature dimension of " + Str(operand));
    }
  }
  if (opcode == Opcode::kBatchNormInference) return operand;
  KILN_ASSIGN_OR_RETURN(Shape feature,
                        MakeArray(operand.element_type(), {DimOf(operand, feature_index)}));
  return Shape::Tuple({operand, feature, feature});
}

}  // namespace kiln::hlo
