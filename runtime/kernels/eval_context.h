// What an op kernel may ask of the evaluator that runs it.
//
// The evaluator (runtime/eval) owns one EvalContext per evaluation and hands
// it to every kernel it calls. A kernel uses it to run a called computation
// (a reduce's to_apply, a sort's comparator, a scatter's combiner) and to
// charge work against the evaluation's step budget, so a runaway program ends
// with an error instead of a hang. Not thread-safe: one evaluation, one
// thread.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/literal.h"

namespace kiln::runtime {

class EvalContext {
 public:
  virtual ~EvalContext() = default;

  // Evaluates `computation` on `args` (one literal per parameter, shapes as
  // the computation declares them) and returns its root's value.
  virtual Result<hlo::Literal> Call(const hlo::Computation& computation,
                                    std::span<const hlo::Literal* const> args) = 0;

  // Charges `elements` units of work to the step budget; an error once the
  // budget is spent ("step budget of N exhausted in %while.3").
  virtual Status Charge(int64_t elements) = 0;

  // A fresh 64-bit seed for `rng` (the evaluation's seed advanced per call).
  virtual uint64_t NextRngSeed() = 0;
};

}  // namespace kiln::runtime
