// Shape inference for ops that apply a computation: reducer checks, reduce,
// reduce-window, select-and-scatter, map and sort (shape_inference.h).
#include "compiler/hlo/shape_inference.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Dims;
using shape_inference_internal::Str;
using shape_inference_internal::TypeName;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::InRange;
using shape_inference_internal::Contains;
using shape_inference_internal::CheckDimList;
using shape_inference_internal::SameTypeIgnoringFp;
using shape_inference_internal::Dim;
using shape_inference_internal::DimOf;
using shape_inference_internal::MakeArray;
using shape_inference_internal::DimsOf;
using shape_inference_internal::IsScalar;

Status VerifyReducer(const ProgramShape& reducer, std::span<const Shape> init_values,
                     std::span<const PrimitiveType> input_types) {
  const size_t n = input_types.size();
  if (reducer.parameters.size() != 2 * n) {
    return InvalidArgumentError("reducer must take " + std::to_string(2 * n) + " parameters, takes " +
                                std::to_string(reducer.parameters.size()));
  }
  if (init_values.size() != n) {
    return InvalidArgumentError("expected " + std::to_string(n) + " init values, got " +
                                std::to_string(init_values.size()));
  }
  std::vector<const Shape*> acc;
  if (reducer.result.IsTuple()) {
    for (const Shape& s : reducer.result.tuple_shapes()) acc.push_back(&s);
  } else {
    acc.push_back(&reducer.result);
  }
  if (acc.size() != n || (n != 1 && !reducer.result.IsTuple())) {
    return InvalidArgumentError("reducer must return " + std::to_string(n) + " scalar(s), returns " +
                                Str(reducer.result));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!IsScalar(*acc[i])) {
      return InvalidArgumentError("reducer must return scalars, returns " + Str(reducer.result));
    }
    if (!ShapesCompatible(*acc[i], reducer.parameters[i])) {
      return InvalidArgumentError("reducer parameter " + std::to_string(i) + " " + Str(reducer.parameters[i]) +
                                  " differs from its result " + Str(*acc[i]));
    }
    if (!ShapesCompatible(*acc[i], init_values[i], true)) {
      return InvalidArgumentError("init value " + std::to_string(i) + " " + Str(init_values[i]) +
                                  " differs from the reducer result " + Str(*acc[i]));
    }
    const Shape input_scalar(input_types[i], {});
    if (!ShapesCompatible(input_scalar, reducer.parameters[n + i], true) ||
        !ShapesCompatible(*acc[i], reducer.parameters[n + i], true)) {
      return InvalidArgumentError("reducer parameter " + std::to_string(n + i) + " " + Str(reducer.parameters[n + i]) +
                                  " does not match input element type " + TypeName(input_types[i]));
    }
  }
  return Ok();
}

namespace {

// Splits variadic reduce/reduce-window operands into inputs and init values
// and checks the inputs have equal dimensions.
Status SplitReduceOperands(std::span<const Shape> operands, const char* op,
                           std::span<const Shape>* inputs, std::span<const Shape>* inits,
                           std::vector<PrimitiveType>* types) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return InvalidArgumentError(std::string(op) + " needs an even, non-zero number of operands, has " +
                                std::to_string(operands.size()));
  }
  const size_t n = operands.size() / 2;
  *inputs = operands.first(n);
  *inits = operands.subspan(n);
  for (size_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectArray((*inputs)[i], std::string(op) + " input"));
    if (!SameDimensions((*inputs)[0], (*inputs)[i])) {
      return InvalidArgumentError(std::string(op) + " inputs must have equal dimensions, got " + Str((*inputs)[0]) +
                                  " and " + Str((*inputs)[i]));
    }
    types->push_back((*inputs)[i].element_type());
  }
  return Ok();
}

// One result per reducer output: a single array or a tuple.
Result<Shape> ReducerResults(const ProgramShape& reducer, const std::vector<Dim>& dims) {
  if (!reducer.result.IsTuple()) return MakeArray(reducer.result.element_type(), dims);
  std::vector<Shape> parts;
  for (const Shape& s : reducer.result.tuple_shapes()) {
    KILN_ASSIGN_OR_RETURN(Shape part, MakeArray(s.element_type(), dims));
    parts.push_back(std::move(part));
  }
  return Shape::Tuple(std::move(parts));
}

}  // namespace

Result<Shape> InferReduceShape(std::span<const Shape> operands, Dims dimensions,
                               const ProgramShape& reducer) {
  std::span<const Shape> inputs, inits;
  std::vector<PrimitiveType> types;
  KILN_RETURN_IF_ERROR(SplitReduceOperands(operands, "reduce", &inputs, &inits, &types));
  KILN_RETURN_IF_ERROR(CheckDimList(dimensions, inputs[0].rank(), "reduce dimensions"));
  KILN_RETURN_IF_ERROR(VerifyReducer(reducer, inits, types));
  std::vector<Dim> dims;
  for (int64_t i = 0; i < inputs[0].rank(); ++i) {
    if (!Contains(dimensions, i)) dims.push_back(DimOf(inputs[0], i));
  }
  return ReducerResults(reducer, dims);
}

Result<Shape> InferReduceWindowShape(std::span<const Shape> operands, const Window& window,
                                     const ProgramShape& reducer) {
  std::span<const Shape> inputs, inits;
  std::vector<PrimitiveType> types;
  KILN_RETURN_IF_ERROR(SplitReduceOperands(operands, "reduce-window", &inputs, &inits, &types));
  KILN_RETURN_IF_ERROR(VerifyReducer(reducer, inits, types));
  KILN_ASSIGN_OR_RETURN(Shape out,
                        InferWindowOutputShape(inputs[0], window, inits[0].element_type()));
  return ReducerResults(reducer, DimsOf(out));
}

Result<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                         const Window& window, const Shape& source,
                                         const Shape& init_value, const ProgramShape& scatter) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "select-and-scatter operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(source, "select-and-scatter source"));
  if (select.parameters.size() != 2) {
    return InvalidArgumentError("select computation must take 2 parameters, takes " +
                                std::to_string(select.parameters.size()));
  }
  if (!ShapesCompatible(select.result, Shape(PrimitiveType::kPred, {}))) {
    return InvalidArgumentError("select computation must return pred[], returns " + Str(select.result));
  }
  const Shape element(operand.element_type(), {});
  for (const Shape& p : select.parameters) {
    if (!ShapesCompatible(element, p, true)) {
      return InvalidArgumentError("select computation parameter " + Str(p) +
                                  " does not match the operand element type " + Str(element));
    }
  }
  const PrimitiveType source_type = source.element_type();
  KILN_RETURN_IF_ERROR(VerifyReducer(scatter, std::span<const Shape>(&init_value, 1),
                                     std::span<const PrimitiveType>(&source_type, 1)));
  KILN_ASSIGN_OR_RETURN(Shape windowed,
                        InferWindowOutputShape(operand, window, operand.element_type()));
  if (!ShapesCompatible(source, windowed, true)) {
    return InvalidArgumentError("source " + Str(source) + " does not match the windowed operand shape " +
                                Str(windowed));
  }
  return operand;
}

Result<Shape> InferMapShape(std::span<const Shape> operands, const ProgramShape& to_apply) {
  if (operands.empty()) return InvalidArgumentError("map needs at least one operand");
  for (const Shape& s : operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(s, "map operand"));
    if (!SameDimensions(s, operands[0])) {
      return InvalidArgumentError("map operands must have equal dimensions, got " + Str(operands[0]) + " and " +
                                  Str(s));
    }
  }
  if (to_apply.parameters.size() != operands.size()) {
    return InvalidArgumentError("map computation takes " + std::to_string(to_apply.parameters.size()) +
                                " parameters but map has " + std::to_string(operands.size()) + " operands");
  }
  if (!IsScalar(to_apply.result)) {
    return InvalidArgumentError("map computation must return a scalar, returns " + Str(to_apply.result));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& p = to_apply.parameters[i];
    if (!IsScalar(p) || !SameTypeIgnoringFp(p.element_type(), operands[i].element_type())) {
      return InvalidArgumentError("map computation parameter " + std::to_string(i) + " " + Str(p) +
                                  " does not match operand element type " + TypeName(operands[i].element_type()));
    }
  }
  return MakeArray(to_apply.result.element_type(), DimsOf(operands[0]));
}

Result<Shape> InferSortShape(std::span<const Shape> operands, int64_t dimension,
                             const ProgramShape& comparator) {
  if (operands.empty()) return InvalidArgumentError("sort needs at least one operand");
  for (const Shape& s : operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(s, "sort operand"));
    if (!SameDimensions(s, operands[0])) {
      return InvalidArgumentError("sort operands must have equal dimensions, got " + Str(operands[0]) + " and " +
                                  Str(s));
    }
  }
  if (!InRange(dimension, operands[0].rank())) {
    return InvalidArgumentError("sort dimension " + std::to_string(dimension) + " is out of range for " +
                                Str(operands[0]));
  }
  if (!ShapesCompatible(comparator.result, Shape(PrimitiveType::kPred, {}))) {
    return InvalidArgumentError("sort comparator must return pred[], returns " + Str(comparator.result));
  }
  if (comparator.parameters.size() != 2 * operands.size()) {
    return InvalidArgumentError("sort comparator must take " + std::to_string(2 * operands.size()) +
                                " parameters, takes " + std::to_string(comparator.parameters.size()));
  }
  for (size_t i = 0; i < comparator.parameters.size(); ++i) {
    const Shape expected(operands[i / 2].element_type(), {});
    if (!ShapesCompatible(expected, comparator.parameters[i], true)) {
      return InvalidArgumentError("sort comparator parameter " + std::to_string(i) + " is " +
                                  Str(comparator.parameters[i]) + ", expected " + Str(expected));
    }
  }
  if (operands.size() == 1) return operands[0];
  return InferTupleShape(operands);
}

}  // namespace kiln::hlo
