// Compiling an HLO module to an executable, in two calls or in one.
//
// LowerWithPlan: a prepared module (prepared_module.h) planned, tiled,
// buffer-assigned and costed under `options` (plan_module.h), lowered to a
// Program and serialized. It reads the prepared module only, so it may be
// called many times, from several threads, on one prepared module; the key
// is the fingerprint of the module as written with these options.
//
// CompileModule: the whole compiler in one call, PrepareModule then
// LowerWithPlan with the same options, then EstimateDeviceTime. The module is modified in place by
// the passes; the key equals what `kiln fingerprint` prints for the same
// text, chip and options. Errors name the stage that failed. Thread-safe
// for distinct modules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/driver/compile_options.h"
#include "compiler/driver/plan_module.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"
#include "runtime/format/program.h"

namespace kiln::driver {

struct CompileOutput {
  hlo::Fingerprint fingerprint;
  runtime::Program program;
  std::vector<uint8_t> executable;  // SerializeProgram(program)
  int64_t kernels = 0;
  int64_t fused_instructions = 0;  // instructions inside multi-instruction kernels
  uint64_t peak_hbm_bytes = 0;
  // Device time of one run. After CompileModule (or EstimateDeviceTime,
  // device_estimate.h): the timing simulator's, as an execute reports it,
  // or the cost model's when the simulator cannot time the program without
  // values (estimate_source says which). After LowerWithPlan or
  // LowerPlanned alone: the cost model's.
  double estimated_us = 0;
  double cost_model_us = 0;  // the planner's analytic estimate of the plan
  std::string estimate_source = "cost_model";  // "simulator" or "cost_model"
  std::string estimate_note;  // why the simulator could not time it, when it could not
  double estimate_ms = 0;     // EstimateDeviceTime's own time, inside compile_ms
  // Wall time from the fingerprint through serialization: preparing plus
  // this lowering (plus the estimate, once EstimateDeviceTime ran).
  double compile_ms = 0;
  // The plan's fusion decisions; indices into the prepared module's entry
  // computation (fusion::NameDecisions names them from
  // *PreparedModule::module, not from the module as read: a slice compile
  // indexes its partitioned per-chip program).
  std::vector<fusion::FusionEdge> fusion_edges;
};

// Fails with kFailedPrecondition when `prepared` came from PreparePasses or
// its passes do not suit options.plan (CheckPlanFits).
Result<CompileOutput> LowerWithPlan(const PreparedModule& prepared, const CompileOptions& options);

// The lowering half of LowerWithPlan: `compiled` (a plan of `prepared`
// with its buffers and cost, from PlanPrepared or CompletePlan) lowered and
// serialized under the key of `prepared` compiled with `options`. The
// program's plan is compiled.plan.kind, so a tuned plan keeps the key of
// the compile it replaces.
Result<CompileOutput> LowerPlanned(const PreparedModule& prepared, const CompileOptions& options,
                                   CompiledPlan compiled);

Result<CompileOutput> CompileModule(hlo::Module& module, const CompileOptions& options);

}  // namespace kiln::driver
