// CompileModule: HLO module -> executable, the whole compiler in one call.
//
// Fingerprints the module as written (so the key equals what `kiln
// fingerprint` prints for the same text, chip and options), then runs the
// pass pipeline, fusion planning, tiling, buffer assignment and the cost
// model (compiler/fusion/compile.h), lowers the plan to a Program and
// serializes it. The module is modified in place by the passes. Errors name
// the stage that failed. Thread-safe for distinct modules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/compile.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"
#include "runtime/program/program.h"

namespace kiln::lowering {

// The options in the canonical text the fingerprint hashes ("plan=heuristic"
// plus any non-default setting, sorted by name).
std::string CanonicalOptionsText(const fusion::CompileOptions& options);
// The same options as a JSON object, for executables and API answers.
std::string OptionsJson(const fusion::CompileOptions& options);

// The fingerprint options for compiling with `options`.
hlo::FingerprintOptions FingerprintOptionsFor(const fusion::CompileOptions& options);

struct CompileOutput {
  hlo::Fingerprint fingerprint;
  runtime::Program program;
  std::vector<uint8_t> executable;  // SerializeProgram(program)
  int64_t kernels = 0;
  int64_t fused_instructions = 0;  // instructions inside multi-instruction kernels
  uint64_t peak_hbm_bytes = 0;
  double estimated_us = 0;
  double compile_ms = 0;  // passes through serialization, wall time
  // The plan's fusion decisions; indices into module.entry() as the passes
  // left it (fusion::NameDecisions names them).
  std::vector<fusion::FusionEdge> fusion_edges;
};

Result<CompileOutput> CompileModule(hlo::Module& module, const fusion::CompileOptions& options);

}  // namespace kiln::lowering
