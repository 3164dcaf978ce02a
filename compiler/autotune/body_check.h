// What the tuner checks of a plan with body flips (private to
// kiln_autotune): each kernel of a loop body or branch that the heuristic
// does not form, as a pair of self-contained HLO modules with the same
// parameters (the kernel's inputs, in order): the fusion the candidate
// program runs, and the same instructions of the computation as planned,
// each evaluated directly. Where the two texts are equal the kernel
// computes exactly what its instructions do; the others are evaluated on
// the same random inputs (Runner::CompareModulePairs). Each fusion's
// operands are checked to carry the values its instructions read (an
// error names the first that does not).
//
// Pure function of its arguments; thread-safe.
#pragma once

#include <vector>

#include "base/status.h"
#include "compiler/autotune/runner.h"
#include "compiler/driver/prepared_module.h"

namespace kiln::autotune::internal {

// `heuristic` from PrepareModuleForTuning (its bodies the heuristic's),
// `candidate` a WithBodyFlips of it. Empty when no body kernel changed.
Result<std::vector<ModulePair>> ChangedBodyKernels(const driver::PreparedModule& heuristic,
                                                   const driver::PreparedModule& candidate);

}  // namespace kiln::autotune::internal
