// scatter: combines update windows into copies of the operands at start
// indices with to_apply (variadic). A window that does not fit inside the
// operand at its start index is skipped, as XLA does.

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/combiner.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/scatter_indices.h"

namespace kiln::runtime {

Result<hlo::Literal> EvalScatter(const hlo::Instruction& instr, Operands operands,
                                 EvalContext& ctx) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return KernelError(instr, "expects N operands, indices and N updates, got " +
                                  std::to_string(operands.size()) + " operands");
  }
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  const int64_t n = static_cast<int64_t>(operands.size() - 1) / 2;
  const hlo::Literal& indices = *operands[n];
  const hlo::Shape& op_shape = operands[0]->shape();
  const hlo::Shape& upd_shape = operands[n + 1]->shape();
  for (int64_t k = 1; k < n; ++k) {
    if (operands[k]->shape().dimensions() != op_shape.dimensions() ||
        operands[n + 1 + k]->shape().dimensions() != upd_shape.dimensions()) {
      return KernelError(instr, "operands or updates of different dimensions");
    }
  }
  KILN_ASSIGN_OR_RETURN(hlo::ScatterDimensionNumbers dn, hlo::GetScatterDimensionNumbers(instr));
  IndexMapping mapping{dn.index_vector_dim, dn.scatter_dims_to_operand_dims,
                       dn.input_batching_dims, dn.scatter_indices_batching_dims};
  if (Status s = CheckIndexMapping(mapping, op_shape, indices.shape()); !s) {
    return KernelError(instr, s.error());
  }
  // Operand dimensions covered by update windows, in order.
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < op_shape.rank(); ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  const std::vector<int64_t> batch_dims = IndexBatchDims(indices.shape(), dn.index_vector_dim);
  bool shape_ok = dn.update_window_dims.size() == window_dims.size() &&
                  upd_shape.rank() == static_cast<int64_t>(batch_dims.size() + window_dims.size());
  std::vector<int64_t> window_size(op_shape.rank(), 1);
  for (size_t w = 0; shape_ok && w < window_dims.size(); ++w) {
    const int64_t ud = dn.update_window_dims[w];
    shape_ok = ud >= 0 && ud < upd_shape.rank() && (w == 0 || ud > dn.update_window_dims[w - 1]) &&
               upd_shape.dimensions(ud) <= op_shape.dimensions(window_dims[w]);
    if (shape_ok) window_size[window_dims[w]] = upd_shape.dimensions(ud);
  }
  for (int64_t d = 0, b = 0; shape_ok && d < upd_shape.rank(); ++d) {
    if (!Contains(dn.update_window_dims, d)) shape_ok = upd_shape.dimensions(d) == batch_dims[b++];
  }
  if (!shape_ok) {
    return KernelError(instr, "updates " + upd_shape.ToString() +
                                  " do not match update_window_dims " +
                                  DimsToString(dn.update_window_dims) + ", operand " +
                                  op_shape.ToString() + " and indices batch shape " +
                                  DimsToString(batch_dims));
  }
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* to_apply,
                        hlo::GetCalledComputation(instr, "to_apply"));
  Result<Combiner> created = Combiner::Create(*to_apply, n, ctx);
  if (!created) return KernelError(instr, created.error());
  Combiner& combiner = *created;
  KILN_RETURN_IF_ERROR(ctx.Charge(upd_shape.ElementCount() * n));

  std::vector<hlo::Literal> results;
  std::vector<hlo::Literal*> result_ptrs;
  for (int64_t k = 0; k < n; ++k) results.push_back(*operands[k]);
  for (hlo::Literal& r : results) result_ptrs.push_back(&r);
  const Operands updates = operands.subspan(n + 1, n);
  const std::vector<int64_t> op_strides = RowMajorStrides(op_shape.dimensions());
  std::vector<int64_t> upd_index(upd_shape.rank(), 0), batch(batch_dims.size()),
      start(op_shape.rank());
  if (upd_shape.ElementCount() > 0) {
    int64_t u = 0;
    do {
      const int64_t ui = u++;
      for (int64_t d = 0, b = 0; d < upd_shape.rank(); ++d) {
        if (!Contains(dn.update_window_dims, d)) batch[b++] = upd_index[d];
      }
      ReadStart(indices, mapping, batch, start);
      bool in_bounds = true;
      int64_t dst = 0;
      for (int64_t d = 0; d < op_shape.rank(); ++d) {
        in_bounds = in_bounds && start[d] >= 0 &&
                    start[d] <= op_shape.dimensions(d) - window_size[d];
        dst += start[d] * op_strides[d];
      }
      if (!in_bounds) continue;
      for (size_t w = 0; w < window_dims.size(); ++w) {
        dst += upd_index[dn.update_window_dims[w]] * op_strides[window_dims[w]];
      }
      if (Status s = combiner.Combine(result_ptrs, dst, updates, ui); !s) {
        return KernelError(instr, s.error());
      }
    } while (NextIndex(upd_shape.dimensions(), upd_index));
  }
  if (n == 1) return std::move(results[0]);
  return hlo::Literal::Tuple(std::move(results));
}

}  // namespace kiln::runtime
