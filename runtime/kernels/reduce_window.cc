// reduce-window: variadic reduction over sliding windows with to_apply.
// Positions in padding or base-dilation holes are skipped (equivalent to
// padding with the init value for an identity init).

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/combiner.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/window_util.h"

namespace kiln::runtime {
namespace {

template <typename T>
hlo::Literal FastReduceWindow(ReducerKind kind, const hlo::Literal& input,
                              const hlo::Literal& init, const WindowMap& windows,
                              const hlo::Shape& out_shape) {
  const std::vector<T> in = ElementsAs<T>(input);
  std::vector<T> out(out_shape.ElementCount());
  const T init_value = GetElementAs<T>(init, 0);
  std::vector<int64_t> index(windows.out_dims().size(), 0), scratch;
  for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
    T acc = init_value;
    windows.ForEachInWindow(index, scratch,
                            [&](int64_t i) { acc = ApplyReducer<T>(kind, acc, in[i]); });
    out[o] = acc;
    NextIndex(windows.out_dims(), index);
  }
  hlo::Literal result(out_shape);
  StoreElements<T>(out, result);
  return result;
}

}  // namespace

Result<hlo::Literal> EvalReduceWindow(const hlo::Instruction& instr, Operands operands,
                                      EvalContext& ctx) {
  if (operands.size() < 2 || operands.size() % 2 != 0) {
    return KernelError(instr, "expects N inputs and N init values, got " +
                                  std::to_string(operands.size()) + " operands");
  }
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  const int64_t n = static_cast<int64_t>(operands.size()) / 2;
  const hlo::Shape& in_shape = operands[0]->shape();
  KILN_ASSIGN_OR_RETURN(hlo::Window window, hlo::GetWindow(instr));
  Result<WindowMap> windows = WindowMap::Create(window, in_shape.dimensions());
  if (!windows) return KernelError(instr, windows.error());
  std::vector<hlo::Shape> out_shapes;
  for (int64_t k = 0; k < n; ++k) {
    const bool tuple_ok = instr.shape().IsTuple() &&
                          static_cast<int64_t>(instr.shape().tuple_shapes().size()) == n;
    const hlo::Shape s = n == 1 ? instr.shape() : tuple_ok ? instr.shape().tuple_shapes(k)
                                                           : hlo::Shape();
    if (operands[k]->shape().dimensions() != in_shape.dimensions() ||
        operands[n + k]->element_count() != 1 || !s.IsArray() ||
        s.dimensions() != windows->out_dims()) {
      return KernelError(instr, "result " + instr.shape().ToString() + " does not match " +
                                    "windowed dimensions " + DimsToString(windows->out_dims()) +
                                    " of the inputs, or an init value is not a scalar");
    }
    out_shapes.push_back(hlo::Shape(s.element_type(), s.dimensions()));
  }
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* to_apply,
                        hlo::GetCalledComputation(instr, "to_apply"));
  Result<Combiner> created = Combiner::Create(*to_apply, n, ctx);
  if (!created) return KernelError(instr, created.error());
  Combiner& combiner = *created;
  const int64_t out_count = Product(windows->out_dims());
  KILN_RETURN_IF_ERROR(ctx.Charge(out_count * Product(windows->window_dims()) * n));

  const hlo::PrimitiveType reducer_type = combiner.scratch(0).shape().element_type();
  if (combiner.kind() != ReducerKind::kGeneral &&
      operands[0]->shape().element_type() == reducer_type &&
      operands[1]->shape().element_type() == reducer_type) {
    return VisitComputeType(reducer_type, [&]<typename T>(T) {
      return FastReduceWindow<T>(combiner.kind(), *operands[0], *operands[1], *windows,
                                 out_shapes[0]);
    });
  }

  std::vector<hlo::Literal> accs;
  std::vector<hlo::Literal*> acc_ptrs;
  for (int64_t k = 0; k < n; ++k) {
    accs.emplace_back(hlo::Shape(combiner.scratch(k).shape().element_type(), out_shapes[k].dimensions()));
  }
  for (hlo::Literal& a : accs) acc_ptrs.push_back(&a);
  std::vector<int64_t> index(windows->out_dims().size(), 0), scratch;
  for (int64_t o = 0; o < out_count; ++o) {
    for (int64_t k = 0; k < n; ++k) ConvertElement(*operands[n + k], 0, accs[k], o);
    Status status = Ok();
    windows->ForEachInWindow(index, scratch, [&](int64_t i) {
      if (status) status = combiner.Combine(acc_ptrs, o, operands.first(n), i);
    });
    if (!status) return KernelError(instr, status.error());
    NextIndex(windows->out_dims(), index);
  }
  std::vector<hlo::Literal> results;
  for (int64_t k = 0; k < n; ++k) {
    hlo::Literal converted(out_shapes[k]);
    for (int64_t o = 0; o < out_count; ++o) ConvertElement(accs[k], o, converted, o);
    results.push_back(std::move(converted));
  }
  if (n == 1) return std::move(results[0]);
  return hlo::Literal::Tuple(std::move(results));
}

}  // namespace kiln::runtime
