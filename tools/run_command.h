// `kiln run`: evaluate an HLO module on host inputs. Split so that later
// additions (--plan, device timing, --timing-only) touch one place each:
// RunOptions holds the flags, RunModule does the work and returns a
// RunReport, run_output.h turns the report into text or JSON.
//
// RunModule owns nothing beyond its call; errors are values with a
// one-line message naming the file or flag at fault. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/hlo/status.h"
#include "runtime/io/eval_budget.h"
#include "runtime/io/safetensors.h"

namespace kiln::tools {

struct RunOptions {
  std::string module_path;
  // At most one input source; none is fine for a module without parameters.
  std::string inputs_path;              // --inputs F.safetensors
  std::string input_literals_path;      // --input-literals F.txt
  std::optional<uint64_t> random_seed;  // --random-inputs SEED
  std::string outputs_path;             // --outputs OUT.safetensors
  bool print_literals = false;
  bool json = false;
  int64_t step_budget = int64_t{1} << 34;
  int64_t memory_budget = runtime::io::kDefaultEvalMemoryBudget;
};

struct RunReport {
  std::string module_name;
  // Output i is named "i" (runtime/io/tensor_names.h).
  std::vector<runtime::io::NamedTensor> outputs;
  double eval_ms = 0;
};

// Loads and verifies the module, builds its arguments, evaluates it and
// writes --outputs if asked.
Result<RunReport> RunModule(const RunOptions& options);

}  // namespace kiln::tools
