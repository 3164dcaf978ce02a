// Shape inference for ops that move data without computing: broadcast,
// reshape, transpose, reverse, slices, concatenate, pad, iota, tuples and
// dimension sizes (shape_inference.h).
#include "compiler/hlo/shape_inference.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Dims;
using shape_inference_internal::Str;
using shape_inference_internal::Join;
using shape_inference_internal::TypeName;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::InRange;
using shape_inference_internal::CheckDimList;
using shape_inference_internal::SameTypeIgnoringFp;
using shape_inference_internal::HigherPrecision;
using shape_inference_internal::Dim;
using shape_inference_internal::DimOf;
using shape_inference_internal::MakeArray;
using shape_inference_internal::DimsOf;
using shape_inference_internal::SizesMatch;
using shape_inference_internal::IsScalar;

Result<Shape> InferBroadcastShape(const Shape& operand, const Shape& output, Dims dimensions) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "broadcast operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(output, "broadcast result"));
  if (operand.element_type() != output.element_type()) {
    return InvalidArgumentError("broadcast changes the element type from " + TypeName(operand.element_type()) + " to " +
                                TypeName(output.element_type()));
  }
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return InvalidArgumentError("broadcast dimensions " + Join(dimensions) +
                                " must have one entry per operand dimension (operand " + Str(operand) + ")");
  }
  KILN_RETURN_IF_ERROR(CheckDimList(dimensions, output.rank(), "broadcast dimensions"));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!SizesMatch(operand, i, output, dimensions[i])) {
      return InvalidArgumentError("operand dimension " + std::to_string(i) + " has size " +
                                  std::to_string(operand.dimensions(i)) + " but result dimension " +
                                  std::to_string(dimensions[i]) + " has size " +
                                  std::to_string(output.dimensions(dimensions[i])));
    }
  }
  return output;
}

Result<Shape> InferReshapeShape(const Shape& operand, const Shape& output) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "reshape operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(output, "reshape result"));
  if (operand.element_type() != output.element_type()) {
    return InvalidArgumentError("reshape changes the element type from " + TypeName(operand.element_type()) + " to " +
                                TypeName(output.element_type()));
  }
  int64_t in = operand.ElementCount(), out = output.ElementCount();
  if (in >= 0 && out >= 0 && in != out) {
    return InvalidArgumentError("reshape changes the element count from " + std::to_string(in) + " (" + Str(operand) +
                                ") to " + std::to_string(out) + " (" + Str(output) + ")");
  }
  return output;
}

Result<Shape> InferTransposeShape(const Shape& operand, Dims permutation) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "transpose operand"));
  if (static_cast<int64_t>(permutation.size()) != operand.rank()) {
    return InvalidArgumentError("transpose dimensions " + Join(permutation) +
                                " are not a permutation of the operand dimensions of " + Str(operand));
  }
  KILN_RETURN_IF_ERROR(CheckDimList(permutation, operand.rank(), "transpose dimensions"));
  std::vector<Dim> dims;
  for (int64_t p : permutation) dims.push_back(DimOf(operand, p));
  return MakeArray(operand.element_type(), dims);
}

Result<Shape> InferReverseShape(const Shape& operand, Dims dimensions) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "reverse operand"));
  KILN_RETURN_IF_ERROR(CheckDimList(dimensions, operand.rank(), "reverse dimensions"));
  return operand;
}

Result<Shape> InferSliceShape(const Shape& operand, const SliceSpec& slice) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "slice operand"));
  const int64_t rank = operand.rank();
  if (static_cast<int64_t>(slice.starts.size()) != rank ||
      slice.limits.size() != slice.starts.size() || slice.strides.size() != slice.starts.size()) {
    return InvalidArgumentError("slice has " + std::to_string(slice.starts.size()) + " dimensions but the operand " +
                                Str(operand) + " has rank " + std::to_string(rank));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t start = slice.starts[i], limit = slice.limits[i], stride = slice.strides[i];
    const std::string where = "slice dimension " + std::to_string(i) + " [" +
                              std::to_string(start) + ":" + std::to_string(limit) + ":" +
                              std::to_string(stride) + "]";
    if (start < 0) return InvalidArgumentError(where + " has a negative start");
    if (stride <= 0) return InvalidArgumentError(where + " has a non-positive stride");
    if (start > limit) return InvalidArgumentError(where + " has start greater than limit");
    if (operand.dimensions(i) >= 0 && limit > operand.dimensions(i)) {
      return InvalidArgumentError(where + " exceeds the operand dimension size " +
                                  std::to_string(operand.dimensions(i)));
    }
    int64_t size = static_cast<int64_t>((__int128(limit) - start + stride - 1) / stride);
    dims.push_back({size, size != 1 && IsDynamicDimension(operand, i)});
  }
  return MakeArray(operand.element_type(), dims);
}

namespace {

// Checks dynamic-slice / dynamic-update-slice start indices: either one
// scalar per operand dimension (all the same integer type) or, in the old
// form, a single rank-1 vector.
Status CheckStartIndices(const Shape& operand, std::span<const Shape> indices, const char* op) {
  const std::string name(op);
  if (indices.size() == 1 && indices[0].IsArray() && indices[0].rank() == 1) {
    if (!IsInteger(indices[0].element_type())) {
      return InvalidArgumentError(name + " start indices must be integers, got " + Str(indices[0]));
    }
    if (!SizesMatch(indices[0], 0, Shape(PrimitiveType::kS32, {operand.rank()}), 0)) {
      return InvalidArgumentError(name + " start index vector " + Str(indices[0]) +
                                  " must have one entry per operand dimension of " + Str(operand));
    }
    return Ok();
  }
  if (static_cast<int64_t>(indices.size()) != operand.rank()) {
    return InvalidArgumentError(name + " has " + std::to_string(indices.size()) + " start indices but the operand " +
                                Str(operand) + " has rank " + std::to_string(operand.rank()));
  }
  for (const Shape& index : indices) {
    if (!IsScalar(index) || !IsInteger(index.element_type())) {
      return InvalidArgumentError(name + " start indices must be integer scalars, got " + Str(index));
    }
    if (index.element_type() != indices[0].element_type()) {
      return InvalidArgumentError(name + " start indices must all have the same type, got " + Str(indices[0]) +
                                  " and " + Str(index));
    }
  }
  return Ok();
}

}  // namespace

Result<Shape> InferDynamicSliceShape(const Shape& operand, std::span<const Shape> start_indices,
                                     Dims slice_sizes) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "dynamic-slice operand"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(operand, start_indices, "dynamic-slice"));
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return InvalidArgumentError("dynamic_slice_sizes " + Join(slice_sizes) +
                                " must have one entry per operand dimension of " + Str(operand));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0) return InvalidArgumentError("dynamic-slice size " + std::to_string(i) + " is negative");
    if (!IsDynamicDimension(operand, i) && slice_sizes[i] > operand.dimensions(i)) {
      return InvalidArgumentError("dynamic-slice size " + std::to_string(slice_sizes[i]) + " of dimension " +
                                  std::to_string(i) + " exceeds the operand dimension size " +
                                  std::to_string(operand.dimensions(i)));
    }
    dims.push_back({slice_sizes[i], false});
  }
  return MakeArray(operand.element_type(), dims);
}

Result<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                           std::span<const Shape> start_indices) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "dynamic-update-slice operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(update, "dynamic-update-slice update"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(operand, start_indices, "dynamic-update-slice"));
  if (update.rank() != operand.rank()) {
    return InvalidArgumentError("update " + Str(update) + " must have the rank of the operand " + Str(operand));
  }
  if (!SameTypeIgnoringFp(update.element_type(), operand.element_type())) {
    return InvalidArgumentError("update " + Str(update) + " must have the element type of the operand " + Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!IsDynamicDimension(operand, i) && !IsDynamicDimension(update, i) &&
        update.dimensions(i) > operand.dimensions(i)) {
      return InvalidArgumentError("update dimension " + std::to_string(i) + " of size " +
                                  std::to_string(update.dimensions(i)) + " exceeds the operand dimension size " +
                                  std::to_string(operand.dimensions(i)));
    }
  }
  return operand;
}

Result<Shape> InferConcatenateShape(std::span<const Shape> operands, int64_t dimension) {
  if (operands.empty()) return InvalidArgumentError("concatenate needs at least one operand");
  const Shape& first = operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(first, "concatenate operand 0"));
  if (!InRange(dimension, first.rank())) {
    return InvalidArgumentError("concatenate dimension " + std::to_string(dimension) + " is out of range for " +
                                Str(first));
  }
  std::vector<Dim> dims = DimsOf(first);
  PrimitiveType type = first.element_type();
  for (size_t k = 1; k < operands.size(); ++k) {
    const Shape& s = operands[k];
    KILN_RETURN_IF_ERROR(ExpectArray(s, "concatenate operand " + std::to_string(k)));
    if (s.rank() != first.rank() || !SameTypeIgnoringFp(s.element_type(), type)) {
      return InvalidArgumentError("concatenate operand " + std::to_string(k) + " " + Str(s) +
                                  " does not match operand 0 " + Str(first));
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i == dimension) continue;
      if (!SizesMatch(first, i, s, i)) {
        return InvalidArgumentError("concatenate operand " + std::to_string(k) + " " + Str(s) +
                                    " differs from operand 0 " + Str(first) + " in dimension " + std::to_string(i));
      }
    }
    Dim& d = dims[dimension];
    Dim add = DimOf(s, dimension);
    d.dynamic = d.dynamic || add.dynamic;
    if (d.size < 0 || add.size < 0) {
      d.size = kUnboundedDim;
    } else if (__builtin_add_overflow(d.size, add.size, &d.size)) {
      return InvalidArgumentError("concatenated dimension size overflows");
    }
    type = HigherPrecision(type, s.element_type());
  }
  return MakeArray(type, dims);
}

Result<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                            const PaddingConfig& padding) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "pad operand"));
  if (!IsScalar(padding_value)) {
    return InvalidArgumentError("padding value must be a scalar, got " + Str(padding_value));
  }
  if (!SameTypeIgnoringFp(operand.element_type(), padding_value.element_type())) {
    return InvalidArgumentError("padding value " + Str(padding_value) + " does not match operand " + Str(operand));
  }
  if (static_cast<int64_t>(padding.dimensions.size()) != operand.rank()) {
    return InvalidArgumentError("padding has " + std::to_string(padding.dimensions.size()) +
                                " dimensions but the operand " + Str(operand) + " has rank " +
                                std::to_string(operand.rank()));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = padding.dimensions[i];
    if (p.interior < 0)
      return InvalidArgumentError("interior padding of dimension " + std::to_string(i) + " is negative");
    Dim d = DimOf(operand, i);
    if (d.size >= 0) {
      __int128 size = __int128(d.size) + p.edge_low + p.edge_high +
                      __int128(std::max<int64_t>(d.size - 1, 0)) * p.interior;
      if (size < 0) return InvalidArgumentError("padding makes dimension " + std::to_string(i) + " negative");
      if (size > INT64_MAX) return InvalidArgumentError("padding overflows dimension " + std::to_string(i));
      d.size = static_cast<int64_t>(size);
    }
    dims.push_back(d);
  }
  return MakeArray(HigherPrecision(operand.element_type(), padding_value.element_type()), dims);
}

Result<Shape> InferIotaShape(const Shape& output, int64_t iota_dimension) {
  KILN_RETURN_IF_ERROR(ExpectArray(output, "iota result"));
  if (output.rank() == 0) return InvalidArgumentError("iota result must not be a scalar");
  if (!InRange(iota_dimension, output.rank())) {
    return InvalidArgumentError("iota_dimension " + std::to_string(iota_dimension) + " is out of range for " +
                                Str(output));
  }
  PrimitiveType t = output.element_type();
  if (!IsInteger(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
    return InvalidArgumentError("iota does not support element type " + TypeName(t));
  }
  return output;
}

Result<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index) {
  if (!tuple.IsTuple()) return InvalidArgumentError("operand " + Str(tuple) + " is not a tuple");
  if (!InRange(index, static_cast<int64_t>(tuple.tuple_shapes().size()))) {
    return InvalidArgumentError("tuple index " + std::to_string(index) + " is out of range for " + Str(tuple));
  }
  return tuple.tuple_shapes(index);
}

Result<Shape> InferTupleShape(std::span<const Shape> operands) {
  return Shape::Tuple(std::vector<Shape>(operands.begin(), operands.end()));
}

Result<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "get-dimension-size operand"));
  if (!InRange(dimension, operand.rank())) {
    return InvalidArgumentError("dimension " + std::to_string(dimension) + " is out of range for " + Str(operand));
  }
  return Shape(PrimitiveType::kS32, {});
}

Result<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                         int64_t dimension) {
  KILN_ASSIGN_OR_RETURN(Shape unused, InferGetDimensionSizeShape(operand, dimension));
  (void)unused;
  if (!IsScalar(size) || size.element_type() != PrimitiveType::kS32) {
    return InvalidArgumentError("set-dimension-size size must be s32[], got " + Str(size));
  }
  if (dimension >= kMaxRank) return InvalidArgumentError("dimension " + std::to_string(dimension) + " is too large");
  Shape s = operand;
  s.set_dynamic_dimension(dimension, true);
  return s;
}

}  // namespace kiln::hlo
