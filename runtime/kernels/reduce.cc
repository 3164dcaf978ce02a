// reduce: variadic reduction of the given dimensions with to_apply.

#include <algorithm>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/combiner.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/fast_reduce.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// Output strides of each input dimension: 0 for reduced dimensions.
std::vector<int64_t> OutputStridesPerInputDim(std::span<const int64_t> input_dims,
                                              std::span<const int64_t> reduced) {
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(input_dims.size()); ++d) {
    if (!Contains(reduced, d)) out_dims.push_back(input_dims[d]);
  }
  std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  std::vector<int64_t> strides(input_dims.size(), 0);
  for (int64_t d = 0, o = 0; d < static_cast<int64_t>(input_dims.size()); ++d) {
    if (!Contains(reduced, d)) strides[d] = out_strides[o++];
  }
  return strides;
}

// One input, a recognised binary reducer: accumulate in the compute type and
// round once when storing the result. Reduced dimensions that form one run
// go through fast_reduce.h's vector loops; others walk the input element by
// element.
template <typename T>
hlo::Literal FastReduce(ReducerKind kind, const hlo::Literal& input, const hlo::Literal& init,
                        std::span<const int64_t> reduced, const hlo::Shape& out_shape) {
  const T init_value = GetElementAs<T>(init, 0);
  hlo::Literal result = hlo::Literal::Uninitialized(out_shape);
  T* const in_place = MutableElementsInPlace<T>(result);
  std::vector<T> acc;
  if (in_place == nullptr) acc.resize(out_shape.ElementCount());
  T* const out = in_place != nullptr ? in_place : acc.data();
  std::vector<T> converted;
  const T* in = ElementsInPlace<T>(input);
  if (in == nullptr && input.element_count() > 0) {
    converted = ElementsAs<T>(input);
    in = converted.data();
  }
  ReduceGeometry geometry;
  if (input.element_count() == 0 || !ContiguousReduceGeometry(input.shape().dimensions(), reduced, geometry) ||
      !ReduceContiguous<T>(kind, geometry, in, init_value, out)) {
    std::fill(out, out + out_shape.ElementCount(), init_value);
    if (input.element_count() > 0) {
      StridedWalker walk(input.shape().dimensions(),
                         OutputStridesPerInputDim(input.shape().dimensions(), reduced));
      int64_t i = 0;
      do {
        T& a = out[walk.offset()];
        a = ApplyReducer<T>(kind, a, in[i++]);
      } while (walk.Next());
    }
  }
  if (in_place == nullptr) StoreElements<T>(acc, result);
  return result;
}

}  // namespace

Result<hlo::Literal> EvalReduce(const hlo::Instruction& instr, Operands operands,
                                EvalContext& ctx) {
  if (operands.size() < 2 || operands.size() % 2 != 0) {
    return KernelError(instr, "expects N inputs and N init values, got " +
                                  std::to_string(operands.size()) + " operands");
  }
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  const int64_t n = static_cast<int64_t>(operands.size()) / 2;
  const hlo::Shape& in_shape = operands[0]->shape();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reduced, hlo::GetDimensions(instr));
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i] < 0 || reduced[i] >= in_shape.rank() ||
        Contains(std::span(reduced).first(i), reduced[i])) {
      return KernelError(instr, "dimensions=" + DimsToString(reduced) +
                                    " invalid for input rank " + std::to_string(in_shape.rank()));
    }
  }
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < in_shape.rank(); ++d) {
    if (!Contains(reduced, d)) out_dims.push_back(in_shape.dimensions(d));
  }
  std::vector<hlo::Shape> out_shapes;
  for (int64_t k = 0; k < n; ++k) {
    if (operands[k]->shape().dimensions() != in_shape.dimensions()) {
      return KernelError(instr, "input " + std::to_string(k) + " has dimensions " +
                                    DimsToString(operands[k]->shape().dimensions()) +
                                    ", input 0 has " + DimsToString(in_shape.dimensions()));
    }
    if (operands[n + k]->element_count() != 1) {
      return KernelError(instr, "init value " + std::to_string(k) + " is not a scalar");
    }
    const bool tuple_ok = instr.shape().IsTuple() &&
                          static_cast<int64_t>(instr.shape().tuple_shapes().size()) == n;
    const hlo::Shape& s = n == 1 ? instr.shape() : tuple_ok ? instr.shape().tuple_shapes(k)
                                                            : hlo::Shape();
    if (!s.IsArray() || s.dimensions() != out_dims) {
      return KernelError(instr, "result shape " + instr.shape().ToString() +
                                    " does not match the reduced dimensions " +
                                    DimsToString(out_dims));
    }
    out_shapes.push_back(hlo::Shape(s.element_type(), out_dims));
  }
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* to_apply,
                        hlo::GetCalledComputation(instr, "to_apply"));
  Result<Combiner> created = Combiner::Create(*to_apply, n, ctx);
  if (!created) return KernelError(instr, created.error());
  Combiner& combiner = *created;
  KILN_RETURN_IF_ERROR(ctx.Charge(in_shape.ElementCount() * n));

  const hlo::PrimitiveType reducer_type = combiner.scratch(0).shape().element_type();
  if (combiner.kind() != ReducerKind::kGeneral &&
      operands[0]->shape().element_type() == reducer_type &&
      operands[1]->shape().element_type() == reducer_type) {
    return VisitComputeType(reducer_type, [&]<typename T>(T) {
      return FastReduce<T>(combiner.kind(), *operands[0], *operands[1], reduced, out_shapes[0]);
    });
  }

  // General reducer: accumulators in the reducer's parameter types.
  std::vector<hlo::Literal> accs;
  std::vector<hlo::Literal*> acc_ptrs;
  const int64_t out_count = Product(out_dims);
  for (int64_t k = 0; k < n; ++k) {
    accs.emplace_back(hlo::Shape(combiner.scratch(k).shape().element_type(), out_dims));
  }
  for (int64_t k = 0; k < n; ++k) {
    acc_ptrs.push_back(&accs[k]);
    for (int64_t o = 0; o < out_count; ++o) ConvertElement(*operands[n + k], 0, accs[k], o);
  }
  if (in_shape.ElementCount() > 0) {
    StridedWalker walk(in_shape.dimensions(),
                       OutputStridesPerInputDim(in_shape.dimensions(), reduced));
    int64_t i = 0;
    do {
      Status status = combiner.Combine(acc_ptrs, walk.offset(), operands.first(n), i++);
      if (!status) return KernelError(instr, status.error());
    } while (walk.Next());
  }
  std::vector<hlo::Literal> results;
  for (int64_t k = 0; k < n; ++k) {
    if (accs[k].shape().element_type() == out_shapes[k].element_type()) {
      results.push_back(std::move(accs[k]));
      continue;
    }
    hlo::Literal converted(out_shapes[k]);
    for (int64_t o = 0; o < out_count; ++o) ConvertElement(accs[k], o, converted, o);
    results.push_back(std::move(converted));
  }
  if (n == 1) return std::move(results[0]);
  return hlo::Literal::Tuple(std::move(results));
}

}  // namespace kiln::runtime
