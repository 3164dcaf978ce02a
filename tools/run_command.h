// `kiln run`: run an HLO module (or a kiln executable) on host inputs and
// report its outputs and its device time on a simulated chip.
//
// By default the module is compiled (CompileModule, --plan) and the
// serialized executable is loaded back and run kernel by kernel, timed by
// the timing simulator with the loop trips and branches each kernel took.
// --direct evaluates the module as written (no compile, no device time);
// --timing-only times the executable without computing values, so modules
// far too large to evaluate here are still timed. A module for several
// devices runs on the most compact slice of that many chips unless
// --topology names another of as many (driver/module_topology.h): one copy
// per chip, its collectives timed over the slice's ICI.
//
// RunModule owns nothing beyond its call; errors are values with a
// one-line message naming the file or flag at fault. A module or executable
// whose values would not fit the memory budget is refused before anything
// is allocated. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/eval/check_calls.h"
#include "runtime/io/eval_budget.h"
#include "runtime/io/safetensors.h"
#include "runtime/timing/device_profile.h"

namespace kiln::tools {

struct RunOptions {
  std::string module_path;  // HLO text, or executable bytes ("KILNEXE" envelope)
  // At most one input source; none is fine for a module without parameters.
  std::string inputs_path;              // --inputs F.safetensors
  std::string input_literals_path;      // --input-literals F.txt
  std::optional<uint64_t> random_seed;  // --random-inputs SEED
  std::string outputs_path;             // --outputs OUT.safetensors
  bool print_literals = false;
  bool json = false;
  int64_t step_budget = int64_t{1} << 34;
  int64_t memory_budget = runtime::io::kDefaultEvalMemoryBudget;

  // Compilation and timing.
  std::string chip;               // --chip; empty: v5e, or an executable's own chip
  std::string plan;               // --plan none|heuristic|given; empty: heuristic
  int64_t scoped_vmem_bytes = 0;  // --scoped-vmem; 0: the chip's default
  bool direct = false;            // --direct: evaluate the module as written
  bool timing_only = false;       // --timing-only: device time, no values
  std::string trace_path;         // --trace F.json: Chrome trace of the kernels
  std::string dot_tiles;          // --dot-tiles BM,BN,BK
  std::string topology;           // --topology 2x4: the slice; empty: one chip
  std::string arg_shapes;         // --arg-shapes s64[],f32[3,4]: refines dynamic shapes
};

// The StableHLO checks a run evaluated (runtime/eval/check_calls.h).
struct CheckSummary {
  int64_t passed = 0;
  int64_t failed = 0;
  std::vector<runtime::CheckOutcome> failures;  // the first ones, in order
};

struct RunReport {
  std::string module_name;
  // Set when the run evaluated any check; a failed one fails `kiln run`.
  std::optional<CheckSummary> checks;
  // Output i is named "i" (runtime/io/tensor_names.h). Empty under
  // --timing-only.
  std::vector<runtime::io::NamedTensor> outputs;
  bool computed_values = false;
  double eval_ms = 0;

  // Everything below is empty for --direct.
  bool ran_executable = false;
  std::string executable_key;
  std::string plan;
  bool compiled_here = false;  // false when the file was an executable
  // Where it ran: "one chip", "2x4 (the module's 8 devices)", "2x2 (given)".
  std::string topology;
  double compile_ms = 0;
  // The device time, or why there is none (a kernel the timing model could
  // not price; the values are still good).
  std::optional<runtime::timing::DeviceProfile> profile;
  std::string timing_error;
};

// Loads the module or executable, builds its arguments, runs it as the
// options say, writes --outputs and --trace if asked. An error under
// --timing-only when control flow depends on data.
Result<RunReport> RunModule(const RunOptions& options);

}  // namespace kiln::tools
