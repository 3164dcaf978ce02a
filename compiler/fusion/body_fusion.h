// Body fusion: the heuristic plan for the computations control flow runs.
//
// The fusion planner cuts the entry computation into kernels; a while loop,
// conditional or call left in the entry is one kernel that runs its called
// computations as they are, where each instruction is one step that writes
// its result to HBM and reads it back. XLA fuses every computation, loop
// bodies included (a scanned transformer layer is a while body), so kiln
// does too: each computation that a while (body and condition) or a
// conditional (branches) runs, and the computations those call in turn, is
// planned with the heuristic (planner.h), and each kernel of several
// instructions is outlined into a `fusion` instruction (kind kLoop, kInput
// or kOutput; a multi-output kernel returns a tuple its users read with
// get-tuple-element) whose fused computation holds clones of the kernel's
// instructions. The runtime evaluates a fusion by evaluating its
// computation, so values do not change; the timing model runs a fusion
// inside a loop as one step (runtime/timing/kernel_work.cc).
//
// The entry, fused computations, reducers, comparators and async wrappers
// are never rewritten, nor a kernel holding an instruction with control
// edges. Used after the pass pipeline for the heuristic and tuned plans;
// the `none` plan keeps bodies unfused, and `given` keeps XLA's fusions.
//
// The autotuner's body search (compiler/autotune/body_search.h) plans them
// again with some profitability decisions flipped (BodyFlips): each body
// kernel becomes one step of its loop, named in BodyKernel::step, so the
// step times a run reports are the kernels' times.
//
// Fails on a computation the planner cannot plan, or flips that cannot be
// made (named); mutates the module in place. Not thread-safe for one module.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/fusion_decisions.h"
#include "compiler/fusion/planner.h"
#include "compiler/hlo/module.h"

namespace kiln::fusion {

// The plan's decisions in one planned computation, named from the
// computation as planned (before outlining), for users (`kiln compile
// --explain-fusion`): a scanned layer's fusions are decided here, not in
// the entry.
// One kernel of a planned computation: its instructions (indices in the
// computation as planned) and the step that runs it: the fusion made of
// it, or its one instruction; empty when it stays a group of steps (an
// instruction with control edges kept it unfused).
struct BodyKernel {
  std::vector<int64_t> instructions;
  std::vector<int64_t> roots;
  std::vector<int64_t> inputs;  // what it reads, in the order its fusion's parameters take
  std::string step;
};

struct BodyDecisions {
  std::string computation;  // its name, without `%`
  std::vector<FusionDecision> decisions;
  std::vector<BodyKernel> kernels;  // execution order
};

// Per planned computation (by name), indices into its heuristic plan's
// edges to flip (fusion::FlipEdges); computations not named keep the
// heuristic's plan.
using BodyFlips = std::map<std::string, std::vector<int64_t>>;

struct BodyFusionStats {
  int64_t computations = 0;  // control-flow computations planned
  int64_t fusions = 0;       // fusion instructions made
  int64_t fused_instructions = 0;  // instructions moved into them
  std::vector<BodyDecisions> decisions;  // one per planned computation, in planning order
};

Result<BodyFusionStats> FuseControlFlowBodies(hlo::Module& module, const PlannerOptions& options,
                                             const BodyFlips& flips = {});

// The options FuseControlFlowBodies plans each body with (from the entry's).
PlannerOptions BodyPlannerOptions(const PlannerOptions& options);

// The computations FuseControlFlowBodies plans, callers before callees.
std::vector<hlo::Computation*> ControlFlowComputations(const hlo::Module& module);

// True when the module has computations FuseControlFlowBodies would plan
// (control flow reached from the entry).
bool HasControlFlowBodies(const hlo::Module& module);

}  // namespace kiln::fusion
