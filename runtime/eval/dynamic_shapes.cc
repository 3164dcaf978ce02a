#include "runtime/eval/dynamic_shapes.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/literal_convert.h"
#include "runtime/eval/shape_ops.h"
#include "runtime/eval/strided_copy.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Literal;

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The actual size of each dimension of an array value.
std::vector<int64_t> ActualSizes(const Value& value) {
  if (value.is_dynamic()) return value.dynamic_sizes();
  return value.array().shape().dimensions();
}

// Copies the leading `box` of `src` (row-major over src_dims) to the front
// of `dst` (row-major over dst_dims).
void CopyLeadingBox(const std::vector<int64_t>& box, const Literal& src,
                    const std::vector<int64_t>& src_dims, Literal& dst,
                    const std::vector<int64_t>& dst_dims) {
  const int64_t width = hlo::HostByteWidth(src.shape().element_type());
  StridedBox strided;
  strided.dims = box;
  strided.src_strides = RowMajorStrides(src_dims);
  strided.dst_strides = RowMajorStrides(dst_dims);
  for (int64_t& s : strided.src_strides) s *= width;
  for (int64_t& s : strided.dst_strides) s *= width;
  if (Product(box) == 0) return;
  CopyStrided(strided, src.data().data(), dst.mutable_data().data(), width);
}

bool HasDynamicArray(const Value& value) {
  if (!value.is_tuple()) return value.is_dynamic();
  for (const Value& e : value.elements()) {
    if (HasDynamicArray(e)) return true;
  }
  return false;
}

Result<const Literal*> ArrayOf(const Instruction& instr, const Value& value) {
  if (value.is_tuple() || value.empty() || value.array().elided()) {
    return std::unexpected(InstrError(instr, "expected an array operand with data"));
  }
  return &value.array();
}

// Points `in` at its conversion (kept in `converted`) when its element type
// is not `instr`'s result type (mixed precision, see shape_ops.h): the ops
// here copy bytes in the result's width.
Status ConvertToResultType(const Instruction& instr, const Literal*& in,
                           std::optional<Literal>& converted) {
  const hlo::PrimitiveType to = instr.shape().element_type();
  if (in->shape().element_type() == to) return Ok();
  Result<Literal> result = ConvertLiteral(*in, to);
  if (!result) return std::unexpected(InstrError(instr, result.error().message));
  converted = std::move(*result);
  in = &*converted;
  return Ok();
}

Result<int64_t> DimensionOperand(const Instruction& instr, std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(int64_t dim, hlo::GetSingleDimension(instr));
  if (operands.empty() || operands[0].is_tuple() || operands[0].empty()) {
    return std::unexpected(InstrError(instr, "expected an array operand"));
  }
  if (dim < 0 || dim >= operands[0].array().shape().rank()) {
    return std::unexpected(
        InstrError(instr, "dimension " + std::to_string(dim) + " is out of range for the operand"));
  }
  return dim;
}

}  // namespace

Result<Value> EvalSetDimensionSize(const Instruction& instr, std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(int64_t dim, DimensionOperand(instr, operands));
  if (operands.size() != 2) return std::unexpected(InstrError(instr, "takes two operands"));
  KILN_ASSIGN_OR_RETURN(const Literal* size_literal, ArrayOf(instr, operands[1]));
  Result<int64_t> size = ScalarToInt64(*size_literal);
  if (!size) return std::unexpected(InstrError(instr, "size: " + size.error().ToString()));
  const Value& operand = operands[0];
  if (operand.array().shape().dimensions() != instr.shape().dimensions()) {
    return std::unexpected(
        InstrError(instr, "operand bounds " + DimsText(operand.array().shape().dimensions()) +
                              " differ from the result's " + DimsText(instr.shape().dimensions())));
  }
  const int64_t bound = instr.shape().dimensions(dim);
  if (*size < 0 || *size > bound) {
    return std::unexpected(InstrError(instr, "size " + std::to_string(*size) + " of dimension " +
                                                 std::to_string(dim) + " is outside [0, " +
                                                 std::to_string(bound) + "]"));
  }
  std::vector<int64_t> sizes = ActualSizes(operand);
  sizes[dim] = *size;
  const Literal* in = &operand.array();
  std::optional<Literal> converted;
  KILN_RETURN_IF_ERROR(ConvertToResultType(instr, in, converted));
  if (converted) return Value::Own(std::move(*converted)).WithDynamicSizes(std::move(sizes));
  return operand.WithDynamicSizes(std::move(sizes));
}

Result<Value> EvalGetDimensionSize(const Instruction& instr, std::span<const Value> operands) {
  KILN_ASSIGN_OR_RETURN(int64_t dim, DimensionOperand(instr, operands));
  if (instr.shape().element_type() != hlo::PrimitiveType::kS32 || instr.shape().rank() != 0) {
    return std::unexpected(InstrError(instr, "get-dimension-size must produce s32[]"));
  }
  Literal out(instr.shape());
  out.Set<int32_t>(0, static_cast<int32_t>(ActualSizes(operands[0])[dim]));
  return Value::Own(std::move(out));
}

Result<Value> EvalDynamicReshape(const Instruction& instr, std::span<const Value> operands) {
  const hlo::Shape& shape = instr.shape();
  if (!shape.IsArray() || static_cast<int64_t>(operands.size()) != shape.rank() + 1) {
    return std::unexpected(
        InstrError(instr, "needs the operand and one size per result dimension"));
  }
  KILN_ASSIGN_OR_RETURN(const Literal* in, ArrayOf(instr, operands[0]));
  std::optional<Literal> converted;
  KILN_RETURN_IF_ERROR(ConvertToResultType(instr, in, converted));
  std::vector<int64_t> sizes(static_cast<size_t>(shape.rank()));
  for (int64_t d = 0; d < shape.rank(); ++d) {
    KILN_ASSIGN_OR_RETURN(const Literal* size_literal, ArrayOf(instr, operands[d + 1]));
    Result<int64_t> size = ScalarToInt64(*size_literal);
    if (!size) return std::unexpected(InstrError(instr, "size: " + size.error().ToString()));
    const int64_t bound = shape.dimensions(d);
    if (*size < 0 || *size > bound || (!shape.is_dynamic_dimension(d) && *size != bound)) {
      return std::unexpected(InstrError(instr, "size " + std::to_string(*size) +
                                                   " does not fit dimension " + std::to_string(d) +
                                                   " of " + shape.ToString()));
    }
    sizes[d] = *size;
  }
  // Gather the valid elements densely, then lay the leading ones out inside
  // the bounds, as XLA's dynamic padder does: when the counts differ the
  // stream is cut short or padded with zeros.
  const std::vector<int64_t> in_sizes = ActualSizes(operands[0]);
  Literal dense(hlo::Shape(shape.element_type(), {std::max(Product(in_sizes), Product(sizes))}));
  CopyLeadingBox(in_sizes, *in, in->shape().dimensions(), dense, in_sizes);
  Literal out(shape);  // zero padding
  CopyLeadingBox(sizes, dense, sizes, out, shape.dimensions());
  return Value::Own(std::move(out)).WithDynamicSizes(std::move(sizes));
}

void PropagateDynamicSizes(const Instruction& instr, std::span<const Value> operands,
                           Value& result) {
  const hlo::Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.dynamic_mask() == 0 || result.is_tuple() || result.empty() ||
      result.is_dynamic()) {
    return;
  }
  for (const Value& operand : operands) {
    if (!operand.is_dynamic() || operand.array().shape().dimensions() != shape.dimensions()) {
      continue;
    }
    std::vector<int64_t> sizes = operand.dynamic_sizes();
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (!shape.is_dynamic_dimension(d)) sizes[d] = shape.dimensions(d);
    }
    result = result.WithDynamicSizes(std::move(sizes));
    return;
  }
}

hlo::Literal ToResultLiteral(Value value) {
  if (!HasDynamicArray(value)) return std::move(value).TakeLiteral();
  if (value.is_tuple()) {
    std::vector<Literal> elements;
    elements.reserve(value.elements().size());
    for (const Value& e : value.elements()) elements.push_back(ToResultLiteral(e));
    return Literal::Tuple(std::move(elements));
  }
  if (value.array().elided()) return std::move(value).TakeLiteral();
  const Literal& padded = value.array();
  const std::vector<int64_t>& sizes = value.dynamic_sizes();
  if (sizes == padded.shape().dimensions()) return std::move(value).TakeLiteral();
  Literal out = Literal::Uninitialized(hlo::Shape(padded.shape().element_type(), sizes));
  CopyLeadingBox(sizes, padded, padded.shape().dimensions(), out, sizes);
  return out;
}

}  // namespace kiln::runtime

namespace kiln::runtime {

Value ArgumentValue(const hlo::Literal& literal, const hlo::Shape& parameter) {
  const hlo::Shape& have = literal.shape();
  if (parameter.IsTuple() || have.IsTuple() || parameter.dynamic_mask() == 0 ||
      have.element_type() != parameter.element_type() ||
      have.dimensions().size() != parameter.dimensions().size() ||
      have.dimensions() == parameter.dimensions()) {
    return Value::Borrow(literal);
  }
  const std::vector<int64_t>& sizes = have.dimensions();
  const std::vector<int64_t>& bounds = parameter.dimensions();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > bounds[d]) return Value::Borrow(literal);  // the caller's check reports it
  }
  hlo::Shape padded_shape = parameter;
  for (size_t d = 0; d < bounds.size(); ++d) padded_shape.set_dynamic_dimension(d, false);
  hlo::Literal padded(padded_shape);
  const size_t width = static_cast<size_t>(hlo::HostByteWidth(have.element_type()));
  const int64_t rank = static_cast<int64_t>(sizes.size());
  // Copy each innermost row of the actual array into the bound-shaped one.
  const int64_t row = rank == 0 ? 1 : sizes[rank - 1];
  const int64_t rows = row == 0 ? 0 : literal.element_count() / row;
  std::vector<int64_t> index(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t src = r * row;
    int64_t dst = 0;
    for (int64_t d = 0; d < rank; ++d) dst = dst * bounds[d] + index[d];
    std::memcpy(padded.mutable_data().data() + dst * width, literal.data().data() + src * width,
                row * width);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return Value::Own(std::move(padded)).WithDynamicSizes(sizes);
}

}  // namespace kiln::runtime
