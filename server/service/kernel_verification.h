// Kernel-by-kernel verification of a tuned candidate, as XLA's autotuner
// checks each fusion against a reference: for programs too large to
// evaluate whole (a training step past the host-memory budget, a slice's
// per-chip program whose collectives need the other chips), only the
// kernels that differ from the heuristic's are evaluated.
//
// Both executables come from one prepared module, so a kernel's module
// names its parameters after the entry instructions it reads and defines
// its instructions under their entry names (lowering/kernel_module_text.h).
// Kernels whose HLO is the same in both programs compute the same values
// (a tile changes time, never values) and are left out. The changed kernels
// are grouped into regions: kernels of either program that define a common
// instruction belong together, so a region covers the same instructions on
// both sides. Each region is evaluated on both sides on the same random
// values of the instructions it reads from outside, and every value both
// sides write out of their kernels is compared within the corpus tests'
// tolerance (runtime/io/literal_compare.h). The heuristic's kernels are the
// reference: they are the form every cached executable had before tuning.
//
// A region that cannot be checked is refused, not failed: its values would
// take more host memory than the budget, a kernel is not evaluable here (a
// collective on a slice, a vendor custom call), an input is a tuple, or the
// two programs compute an instruction in different places. The result
// names the instructions of every refused region and why, so the caller
// can keep the heuristic's form there and check the rest again. A value
// that differs is an error. Pure function of its arguments; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "runtime/program/loaded_program.h"

namespace kiln::service {

struct KernelVerificationOptions {
  uint64_t seed = 7;                           // random inputs
  int64_t memory_budget = int64_t{2} << 30;    // bytes of one region's values, both sides
  int64_t step_budget = int64_t{1} << 32;      // evaluator units per region side
  std::function<Status()> before_kernel;       // called before each kernel evaluated; may be empty
};

struct KernelVerification {
  int64_t changed_kernels = 0;   // candidate kernels whose HLO the heuristic lacks
  int64_t regions = 0;           // regions checked
  int64_t compared_values = 0;   // values compared
  std::vector<std::string> kernels;  // the candidate's changed kernels, by name
  // Regions that could not be checked: the entry instructions they compute
  // (both programs') and why the first of them was refused.
  std::vector<std::string> refused_instructions;
  std::string refused_why;
};

// What was checked and refused when no checked region's values differ;
// kFailedPrecondition naming the first difference; other errors when a
// kernel failed to evaluate.
Result<KernelVerification> VerifyChangedKernels(const runtime::LoadedProgram& reference,
                                                const runtime::LoadedProgram& candidate,
                                                const KernelVerificationOptions& options);

// One kernel checked alone: two modules with the same parameters (the
// instructions evaluated directly, and the kernel a candidate runs), both
// borrowed. `instructions` names what it covers, for refusals.
struct ModuleCheck {
  std::string name;
  const hlo::Module* reference = nullptr;
  const hlo::Module* candidate = nullptr;
  std::vector<std::string> instructions;
};

// Evaluates each pair on the same random values of its parameters and
// compares the results at the corpus tolerance. A pair whose values would
// exceed the memory budget, that runs past the step budget or holds an op
// the evaluator lacks is refused (refused_instructions, refused_why); a
// value that differs is kFailedPrecondition naming the pair.
Result<KernelVerification> VerifyModulePairs(const std::vector<ModuleCheck>& checks,
                                             const KernelVerificationOptions& options);

}  // namespace kiln::service
