// select-and-scatter: for each window (one per source element) pick an
// operand element with `select`, then combine the source value into the
// result at that position with `scatter`. The result starts as the init
// value everywhere. Windows that read no operand element scatter nothing.

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/combiner.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/window_util.h"

namespace kiln::runtime {

Result<hlo::Literal> EvalSelectAndScatter(const hlo::Instruction& instr, Operands operands,
                                          EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 3));
  const hlo::Literal& operand = *operands[0];
  const hlo::Literal& source = *operands[1];
  const hlo::Literal& init = *operands[2];
  KILN_ASSIGN_OR_RETURN(hlo::Window window, hlo::GetWindow(instr));
  Result<WindowMap> windows = WindowMap::Create(window, operand.shape().dimensions());
  if (!windows) return KernelError(instr, windows.error());
  if (source.shape().dimensions() != windows->out_dims() || init.element_count() != 1 ||
      !instr.shape().IsArray() || instr.shape().dimensions() != operand.shape().dimensions()) {
    return KernelError(instr, "source " + source.shape().ToString() +
                                  " does not match the windowed operand dimensions " +
                                  DimsToString(windows->out_dims()) +
                                  ", or init is not a scalar");
  }
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* select, hlo::GetCalledComputation(instr, "select"));
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* scatter,
                        hlo::GetCalledComputation(instr, "scatter"));
  Result<Combiner> selector = Combiner::Create(*select, 1, ctx);
  if (!selector) return KernelError(instr, selector.error());
  Result<Combiner> combiner = Combiner::Create(*scatter, 1, ctx);
  if (!combiner) return KernelError(instr, combiner.error());
  const int64_t source_count = source.element_count();
  KILN_RETURN_IF_ERROR(ctx.Charge(source_count * Product(windows->window_dims())));

  hlo::Literal result(instr.shape());
  for (int64_t i = 0; i < result.element_count(); ++i) ConvertElement(init, 0, result, i);
  hlo::Literal* result_ptr = &result;
  const hlo::Literal* source_ptr = &source;
  std::vector<int64_t> index(windows->out_dims().size(), 0), scratch;
  for (int64_t s = 0; s < source_count; ++s) {
    int64_t selected = -1;
    Status status = Ok();
    windows->ForEachInWindow(index, scratch, [&](int64_t i) {
      if (!status) return;
      if (selected < 0) {
        selected = i;
        return;
      }
      ConvertElement(operand, selected, selector->scratch(0), 0);
      ConvertElement(operand, i, selector->scratch(1), 0);
      Result<hlo::Literal> keep = selector->Call(selector->scratch_args());
      if (!keep || !keep->shape().IsArray() || keep->element_count() != 1) {
        status = keep ? InvalidArgumentError("select did not return a scalar") : keep.error();
        return;
      }
      if (!GetElementAs<bool>(*keep, 0)) selected = i;
    });
    if (status && selected >= 0) {
      status = combiner->Combine(std::span(&result_ptr, 1), selected, std::span(&source_ptr, 1), s);
    }
    if (!status) return KernelError(instr, status.error());
    NextIndex(windows->out_dims(), index);
  }
  return result;
}

}  // namespace kiln::runtime
