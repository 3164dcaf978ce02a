// gather: slices of the operand at start indices, with XLA's full dimension
// numbers (batching dims included). Start indices are clamped so that each
// slice lies inside the operand.

#include <algorithm>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/scatter_indices.h"

namespace kiln::runtime {

Result<hlo::Literal> EvalGather(const hlo::Instruction& instr, Operands operands,
                                EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  const hlo::Literal& operand = *operands[0];
  const hlo::Literal& indices = *operands[1];
  const hlo::Shape& op_shape = operand.shape();
  if (op_shape.element_type() != instr.shape().element_type()) {
    // The verifier allows it (mixed precision, as XLA's does), but elements
    // are moved as bytes: an f64 element into an f32 result would write
    // past its end.
    return KernelError(instr, "gather of a " + std::string(hlo::PrimitiveTypeName(op_shape.element_type())) +
                                  " operand into a " +
                                  std::string(hlo::PrimitiveTypeName(instr.shape().element_type())) +
                                  " result (mixed precision) is not supported by the evaluator; convert the operand first");
  }
  KILN_ASSIGN_OR_RETURN(hlo::GatherDimensionNumbers dn, hlo::GetGatherDimensionNumbers(instr));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, hlo::GetGatherSliceSizes(instr));
  IndexMapping mapping{dn.index_vector_dim, dn.start_index_map, dn.operand_batching_dims,
                       dn.start_indices_batching_dims};
  if (Status s = CheckIndexMapping(mapping, op_shape, indices.shape()); !s) {
    return KernelError(instr, s.error());
  }
  if (static_cast<int64_t>(slice_sizes.size()) != op_shape.rank()) {
    return KernelError(instr, "slice_sizes " + DimsToString(slice_sizes) +
                                  " does not match operand rank " +
                                  std::to_string(op_shape.rank()));
  }
  // Operand dimensions that appear in the output (offset dims), in order.
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < op_shape.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > op_shape.dimensions(d)) {
      return KernelError(instr, "slice_sizes " + DimsToString(slice_sizes) +
                                    " exceeds operand " + op_shape.ToString());
    }
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  // The expected result dimensions: batch dims of the indices, with the
  // window sizes at offset_dims.
  const std::vector<int64_t> batch_dims = IndexBatchDims(indices.shape(), dn.index_vector_dim);
  const hlo::Shape& out_shape = instr.shape();
  const int64_t out_rank = static_cast<int64_t>(batch_dims.size() + window_dims.size());
  bool shape_ok = out_shape.IsArray() && out_shape.rank() == out_rank &&
                  dn.offset_dims.size() == window_dims.size();
  for (size_t i = 0; i < dn.offset_dims.size(); ++i) {
    shape_ok = shape_ok && dn.offset_dims[i] >= 0 && dn.offset_dims[i] < out_rank &&
               (i == 0 || dn.offset_dims[i] > dn.offset_dims[i - 1]);
  }
  for (int64_t d = 0, b = 0, w = 0; shape_ok && d < out_rank; ++d) {
    const int64_t want = Contains(dn.offset_dims, d) ? slice_sizes[window_dims[w++]]
                                                     : (b < static_cast<int64_t>(batch_dims.size())
                                                            ? batch_dims[b++]
                                                            : -1);
    shape_ok = out_shape.dimensions(d) == want;
  }
  if (!shape_ok) {
    return KernelError(instr, "result shape " + out_shape.ToString() +
                                  " does not match the indices batch shape " +
                                  DimsToString(batch_dims) + " and slice_sizes " +
                                  DimsToString(slice_sizes));
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(out_shape.ElementCount()));

  hlo::Literal result(out_shape);
  if (out_shape.ElementCount() == 0) return result;
  // A collapsed or batching dimension may have slice size 0 (XLA allows 0
  // or 1 there); every slice is then empty, yet the result has elements:
  // there is nothing to read them from (the clamped start could sit past
  // the operand's end).
  for (int64_t d = 0; d < op_shape.rank(); ++d) {
    if (slice_sizes[d] == 0) {
      return KernelError(instr, "slice_sizes " + DimsToString(slice_sizes) + " is 0 in operand dimension " +
                                    std::to_string(d) + ", so every slice is empty, but the result " +
                                    out_shape.ToString() + " has elements");
    }
  }
  const std::vector<int64_t> op_strides = RowMajorStrides(op_shape.dimensions());
  std::vector<int64_t> out_index(out_rank, 0), batch(batch_dims.size()), start(op_shape.rank());
  int64_t o = 0;
  do {
    for (int64_t d = 0, b = 0; d < out_rank; ++d) {
      if (!Contains(dn.offset_dims, d)) batch[b++] = out_index[d];
    }
    ReadStart(indices, mapping, batch, start);
    int64_t src = 0;
    for (int64_t d = 0; d < op_shape.rank(); ++d) {
      src += std::clamp<int64_t>(start[d], 0, op_shape.dimensions(d) - slice_sizes[d]) *
             op_strides[d];
    }
    for (size_t w = 0; w < window_dims.size(); ++w) {
      src += out_index[dn.offset_dims[w]] * op_strides[window_dims[w]];
    }
    CopyElement(operand, src, result, o++);
  } while (NextIndex(out_shape.dimensions(), out_index));
  return result;
}

}  // namespace kiln::runtime
