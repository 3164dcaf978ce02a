// The interpreter behind EvaluateModule: one instance per evaluation.
//
// It runs computations step by step from their ComputationPlan (built once
// per computation and cached here), keeps values in a vector indexed by
// instruction and drops each after its last reader. It is the EvalContext the
// heavy kernels (runtime/kernels) call back into, and it enforces the step
// budget and the interrupt. Not thread-safe: one evaluation, one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/literal.h"
#include "runtime/eval/computation_plan.h"
#include "runtime/eval/evaluator.h"
#include "runtime/eval/value.h"
#include "runtime/kernels/eval_context.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {

class Interpreter final : public EvalContext {
 public:
  explicit Interpreter(const EvalOptions& options);
  // Adds the units charged to options.units_charged, if set.
  ~Interpreter() override;

  // Evaluates `computation` on `args` (one per parameter; shapes checked).
  Result<Value> Run(const hlo::Computation& computation, std::span<const Value> args);

  // EvalContext.
  Result<hlo::Literal> Call(const hlo::Computation& computation,
                            std::span<const hlo::Literal* const> args) override;
  Status Charge(int64_t elements) override;
  uint64_t NextRngSeed() override;

 private:
  Result<const ComputationPlan*> PlanFor(const hlo::Computation& computation);
  Status CheckArguments(const hlo::Computation& computation, std::span<const Value> args);
  Result<Value> EvalInstruction(const hlo::Instruction& instr, std::span<const Value> operands);
  Status RunRegion(const ElementwiseRegion& region, std::vector<Value>& values);
  // One elementwise instruction outside any plan (async-wrapped ops).
  Result<Value> EvalElementwiseAlone(const hlo::Instruction& instr, std::span<const Value> operands);
  Result<Value> EvalKernel(const hlo::Instruction& instr, std::span<const Value> operands);
  // Runs a heavy kernel on the operands (tuple operands assembled).
  Result<Value> EvalKernelFn(const hlo::Instruction& instr, std::span<const Value> operands,
                             KernelFn kernel);

  // control_flow.cc
  Result<Value> EvalWhile(const hlo::Instruction& instr, const Value& init);
  Result<Value> EvalConditional(const hlo::Instruction& instr, std::span<const Value> operands);
  Result<Value> EvalCalled(const hlo::Instruction& instr, std::string_view attribute,
                           std::span<const Value> operands);
  Result<Value> EvalMap(const hlo::Instruction& instr, std::span<const Value> operands);
  Result<Value> EvalAsync(const hlo::Instruction& instr, std::span<const Value> operands);

  // collective_ops.cc
  Result<Value> EvalCollective(const hlo::Instruction& instr, std::span<const Value> operands);
  Result<Value> EvalCollectiveOnOneChip(const hlo::Instruction& instr, std::span<const Value> operands,
                                        const hlo::Shape& result_shape, bool tuple_start);
  // passthrough_ops.cc
  Result<Value> EvalCustomCall(const hlo::Instruction& instr, std::span<const Value> operands);

  EvalOptions options_;
  int64_t steps_left_;
  uint64_t rng_state_;
  // The innermost running while loop (named in budget errors) and the
  // instruction being evaluated.
  std::vector<const hlo::Instruction*> active_whiles_;
  const hlo::Instruction* current_ = nullptr;
  int depth_ = 0;
  std::unordered_map<const hlo::Computation*, std::unique_ptr<ComputationPlan>> plans_;
};

// A zero-filled value of `shape` (arrays, tuples, tokens).
Value ZeroValue(const hlo::Shape& shape);

}  // namespace kiln::runtime
