// Applying a reducer computation (reduce's, reduce-window's or scatter's
// to_apply, select-and-scatter's scatter) to elements of literals.
//
// A reducer that is one binary op of its two parameters (add, multiply,
// maximum, minimum, and, or) is recognised and applied directly; any other
// computation is run through EvalContext::Call with reused scalar argument
// literals. A Combiner borrows the computation and the context for its
// lifetime; not thread-safe (one per kernel call).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/literal.h"
#include "runtime/kernels/eval_context.h"

namespace kiln::runtime {

// kAssign: the computation returns its second parameter (scatter's "update").
enum class ReducerKind : uint8_t {
  kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kAssign, kGeneral
};

// The binary op `computation` applies to its two scalar parameters of one
// element type, or kGeneral. kAnd/kOr are only reported for integer and pred
// types, kMaximum/kMinimum not for complex.
ReducerKind ClassifyReducer(const hlo::Computation& computation);

// a (op) b in a compute type (element_access.h). Integers wrap; maximum and
// minimum propagate NaN as XLA does.
template <typename T>
T ApplyReducer(ReducerKind kind, T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (kind == ReducerKind::kAdd) return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
    if (kind == ReducerKind::kMultiply) return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
  }
  switch (kind) {
    case ReducerKind::kAssign: return b;
    case ReducerKind::kAdd: return a + b;
    case ReducerKind::kMultiply: return a * b;
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  if constexpr (std::is_integral_v<T>) {
    if (kind == ReducerKind::kAnd) return a & b;
    if (kind == ReducerKind::kOr) return a | b;
  }
  if constexpr (!std::is_same_v<T, std::complex<float>> &&
                !std::is_same_v<T, std::complex<double>>) {
    if (kind == ReducerKind::kMaximum) return a < b ? b : a;
    if (kind == ReducerKind::kMinimum) return b < a ? b : a;
  }
  return a;
}

class Combiner {
 public:
  // `computation` takes 2N scalar parameters (N accumulators, then N inputs)
  // and returns a scalar (N = 1) or an N-tuple.
  static Result<Combiner> Create(const hlo::Computation& computation, int64_t arity,
                                 EvalContext& ctx);

  // For k in [0, N): accs[k][ai] = f(accs[..][ai], inputs[..][xi])[k], with
  // element types converted to and from the computation's parameter types.
  Status Combine(std::span<hlo::Literal* const> accs, int64_t ai,
                 std::span<const hlo::Literal* const> inputs, int64_t xi);

  // The raw call: f(args...) on scalars already laid out as parameters.
  Result<hlo::Literal> Call(std::span<const hlo::Literal* const> args) {
    return ctx_->Call(*computation_, args);
  }

  // Scratch argument literal j (of parameter j's shape), for callers that
  // lay arguments out themselves.
  hlo::Literal& scratch(int64_t j) { return scratch_[j]; }
  std::span<const hlo::Literal* const> scratch_args() const { return scratch_ptrs_; }

  ReducerKind kind() const { return kind_; }

 private:
  Combiner() = default;

  const hlo::Computation* computation_ = nullptr;
  EvalContext* ctx_ = nullptr;
  int64_t arity_ = 0;
  ReducerKind kind_ = ReducerKind::kGeneral;
  std::vector<hlo::Literal> scratch_;
  std::vector<const hlo::Literal*> scratch_ptrs_;
};

// dst[di] = src[si] converted to dst's element type (bytes copied when the
// types match).
void ConvertElement(const hlo::Literal& src, int64_t si, hlo::Literal& dst, int64_t di);

}  // namespace kiln::runtime
