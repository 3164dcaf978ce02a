// The op evaluator: runs a verified HLO module on host literals, following
// XLA's operation semantics. This is the numerics of a simulated chip.
//
// The module and the arguments are borrowed for the call; the result is
// owned by the caller. An evaluation that exceeds its step budget (runaway
// while loops), is stopped through its Interrupt (deadline, cancellation;
// interrupt.h), meets an unsupported op or custom-call target
// (`unsupported custom-call target "X"`) or gets arguments of the wrong
// shape returns an Error naming the instruction; it never crashes. Each call
// is independent: concurrent calls on one module are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "runtime/eval/interrupt.h"

namespace kiln::runtime {

struct SliceMember;  // slice_rendezvous.h
class CheckRecorder;  // check_calls.h

// Told the control flow an evaluation takes, for callers that price a run
// (the timing simulator counts loop trips and branches). Called on the
// evaluating thread; the instructions belong to the evaluated module.
class ControlFlowObserver {
 public:
  virtual ~ControlFlowObserver() = default;
  // `while_op` finished after running its body `trips` times.
  virtual void WhileFinished(const hlo::Instruction& while_op, int64_t trips) = 0;
  // `conditional` ran branch `branch` (true_computation is 0, false 1).
  virtual void BranchTaken(const hlo::Instruction& conditional, size_t branch) = 0;
};

struct EvalOptions {
  // Units of work (elements produced, loop iterations) before the evaluation
  // gives up with an error.
  int64_t step_budget = int64_t{1} << 34;
  // Seed of `rng` and of any other source of randomness.
  uint64_t rng_seed = 0;
  // Borrowed for the call; nullptr when nobody watches.
  ControlFlowObserver* control_flow = nullptr;
  // Borrowed; checked once per instruction, kernel and loop trip. Once it
  // is stopped the evaluation ends with "stopped (<reason>) in %while.3".
  const Interrupt* interrupt = nullptr;
  // Borrowed; when set, the units this evaluation charged are added to it
  // (also when it fails), so a caller can spread one budget over many calls.
  int64_t* units_charged = nullptr;
  // Borrowed; set when this evaluation is one device of a simulated slice
  // (runtime/spmd/slice_execution.h): its collectives meet the other
  // devices' and replica-id / partition-id say which device it is. nullptr:
  // one chip, the only member of every collective group.
  const SliceMember* slice = nullptr;
  // Borrowed; when set, the outcome of every StableHLO check the evaluation
  // runs (check_calls.h) is recorded there.
  CheckRecorder* checks = nullptr;
};

// Evaluates the module's entry computation. `args[i]` is parameter i; its
// shape must equal the parameter's (layouts may differ: literals are
// row-major). Returns the root's value (a tuple literal for a tuple root).
// Whether every instruction of `module` (any computation) is one the
// evaluator can compute: Ok, or Unimplemented naming the first that is
// not (a vendor custom call such as AwsNeuronGelu, send/recv, infeed), so
// a run that could not finish is refused before it starts. Timing needs no
// values and is not affected.
Status CheckEvaluable(const hlo::Module& module);
// The custom-call targets the evaluator computes (annotations, TopK,
// AllocateBuffer, the builders' math functions).
bool EvaluatorKnowsCustomCall(std::string_view target);

Result<hlo::Literal> EvaluateModule(const hlo::Module& module, std::span<const hlo::Literal> args,
                                    const EvalOptions& options = {});

// Evaluates one computation of a module on borrowed arguments.
Result<hlo::Literal> EvaluateComputation(const hlo::Computation& computation,
                                         std::span<const hlo::Literal* const> args,
                                         const EvalOptions& options = {});

}  // namespace kiln::runtime
