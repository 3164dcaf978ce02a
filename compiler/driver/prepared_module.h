// PrepareModule: the first half of a compile. Fingerprints the module as
// written and runs the pass pipeline on it once (in place); the result can
// then be planned and lowered any number of times, with different plans,
// chips or tilings (compile_module.h: LowerWithPlan), without re-running the
// passes: what an autotuner needs.
//
// A PreparedModule borrows the module: keep it alive and do not modify it
// while the PreparedModule (or any plan made from it) is used. Nothing
// changes a PreparedModule after PrepareModule returns, so one may be read
// by several threads at once. Errors name the stage: "pass cse: ...",
// "after pass dce: <verifier error>", "unknown chip 'v9'". The module must
// already have passed the verifier.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/driver/compile_options.h"
#include "compiler/fusion/body_fusion.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"

namespace kiln::driver {

struct PreparedModule {
  // After the passes: the caller's module (borrowed), or for a compile for
  // a slice of a module with global shapes, its per-device program, owned
  // by `partitioned`.
  const hlo::Module* module = nullptr;
  std::shared_ptr<hlo::Module> partitioned;
  // With `partitioned`: the source entry's parameter shapes and shardings
  // and its result's (HLO text), which the executable carries so a run can
  // take global arguments and give the global result.
  struct GlobalSignature {
    std::vector<std::string> parameter_shapes;
    std::vector<std::string> parameter_shardings;
    std::string result_shape;
    std::string result_sharding;
  };
  std::optional<GlobalSignature> global_signature;
  // The module as written, before the passes; LowerWithPlan rekeys it with
  // each lowering's options. Empty after PreparePasses.
  std::optional<hlo::Fingerprint> source_fingerprint;
  bool passes_ran = false;
  // The passes inlined XLA's fusion instructions: every plan but `given`
  // starts from the unfused graph, `given` from XLA's fusions.
  bool fusions_inlined = false;
  // The module has loop bodies or branches, and they were fused
  // (heuristic and tuned plans only; compiler/fusion/body_fusion.h).
  // Without them, fusing changes nothing and every plan fits.
  bool has_control_flow_bodies = false;
  bool bodies_fused = false;
  // With bodies_fused: the fusion decisions in each loop body and branch,
  // named (`kiln compile --explain-fusion` shows them after the entry's).
  std::vector<fusion::BodyDecisions> body_decisions;
  // The flips the bodies were fused with (empty: the heuristic's plan).
  fusion::BodyFlips body_flips;
  // PrepareModuleForTuning with bodies_fused: the program after the passes
  // and before its bodies were fused, as HLO text, from which WithBodyFlips
  // plans them again. Shared by every variant; empty otherwise.
  std::shared_ptr<const std::string> unfused_bodies_text;
  // A WithBodyFlips result owns its program here (`module` points at it).
  std::shared_ptr<const hlo::Module> variant;
  std::vector<std::string> changed_passes;
  double passes_ms = 0;
  double prepare_ms = 0;  // fingerprint and passes, wall time
};

// Fingerprints `module`, then runs the passes `options` ask for (run_passes,
// verify_passes; options.plan says whether fusions are inlined). With a
// topology, a module with global shapes and sharding annotations is first
// partitioned into its per-device program (compiler/spmd); a module that is
// already a per-device program must be one for that many chips. Fails on
// an unknown chip, a bad topology or a negative scoped VMEM before doing
// any work.
Result<PreparedModule> PrepareModule(hlo::Module& module, const CompileOptions& options);

// PrepareModule that also keeps the program as it was before its bodies
// were fused (unfused_bodies_text), for the tuner's body search. Costs one
// print of the program when it has bodies to fuse.
Result<PreparedModule> PrepareModuleForTuning(hlo::Module& module, const CompileOptions& options);

// `prepared` (from PrepareModuleForTuning) with its loop bodies and
// branches fused again with `flips`: a new program, owned by the result, in
// which the entry is the same instruction for instruction (the entry's plan
// and its edits still apply). Fails on flips that cannot be made (named),
// or when `prepared` kept no unfused program. Thread-safe for one
// `prepared`.
Result<PreparedModule> WithBodyFlips(const PreparedModule& prepared, const CompileOptions& options,
                                     const fusion::BodyFlips& flips);

// The pass pipeline alone, without the fingerprint: for planning without
// lowering (PlanModule). LowerWithPlan refuses the result.
Result<PreparedModule> PreparePasses(hlo::Module& module, const CompileOptions& options);

// OK when a module prepared as `prepared` may be planned with `options`:
// the chip is known, the scoped VMEM is not negative, and the plan starts
// from the graph the passes left (`given` needs XLA's fusions kept, every
// other plan needs them inlined; where the module has loop bodies or
// branches, heuristic and tuned need them fused, the others unfused).
Status CheckPlanFits(const PreparedModule& prepared, const CompileOptions& options);

}  // namespace kiln::driver
