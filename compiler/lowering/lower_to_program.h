// Lowering: a planned module -> the executable Program a simulated chip runs.
//
// Each kernel of the FusionPlan becomes one ProgramKernel whose HLO is a
// self-contained module: the kernel's instructions (plus the bitcasts, small
// constants and tuples it reads, folded in), one parameter per input array and a
// root holding its output arrays. Values that live between kernels are
// buffers: every entry parameter array, every large constant, every array a
// kernel writes. Tuples never occupy a buffer: a tuple value is the list of
// its arrays' buffers, and `tuple`/`get-tuple-element` in the entry only
// rearrange those lists. A value that must exist but no plan kernel writes
// (an `after-all` token, a bitcast that is itself a result) gets a small
// kernel of its own.
//
// Borrows the module and plan for the call; the Program is the caller's.
// Fails (naming the instruction) only on a plan that does not match the
// module. Thread-safe for distinct inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/module.h"
#include "runtime/format/program.h"

namespace kiln::lowering {

// Per plan kernel, what the analytic cost model says.
struct KernelEstimate {
  double flops = 0;
  double bytes = 0;
  double seconds = 0;
};

struct LoweringInput {
  const hlo::Module* module = nullptr;  // after the pass pipeline
  const fusion::FusionPlan* plan = nullptr;
  std::vector<KernelEstimate> estimates;  // one per plan kernel, or empty
  // HBM offset of each entry instruction's value from buffer assignment,
  // indexed by entry index; empty when not assigned.
  std::vector<int64_t> value_offsets;
  std::string key;
  std::string chip;
  std::string options_json;
  uint64_t peak_hbm_bytes = 0;
  double compile_ms = 0;
};

Result<runtime::Program> LowerToProgram(const LoweringInput& input);

}  // namespace kiln::lowering
