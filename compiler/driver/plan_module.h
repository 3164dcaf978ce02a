// Planning a prepared module: fusion planning on the entry computation,
// tiles, HBM buffers and the estimated device time (the cost model), for one
// plan on one chip. PlanModule runs the passes first (PreparePasses), the
// compiler's planning entry point without lowering.
//
// The returned plan indexes the entry computation of the module as it is
// after the passes; keep the module alive and unmodified while the plan is
// used. Errors name the stage: "pass cse: ...", "after pass dce:
// <verifier error>", "planning: ...", "buffer assignment: program needs ...
// of HBM", "unknown chip 'v9'". The module must already have passed the
// verifier. Thread-safe for different modules; PlanPrepared also for one
// prepared module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/cost_model.h"
#include "compiler/driver/compile_options.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/fusion/tiling.h"
#include "compiler/hlo/module.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::driver {

struct StageTimes {
  double passes_ms = 0;
  double planning_ms = 0;  // edges, kernels and tiles
  double buffers_ms = 0;
  double cost_ms = 0;
};

struct CompiledPlan {
  const runtime::ChipSpec* chip = nullptr;  // static table entry
  fusion::FusionPlan plan;
  buffers::BufferAssignment buffers;
  cost::PlanCost cost;
  double estimated_us = 0;
  // Chips the module's sharding annotations spread it over (sharding.h);
  // buffers are checked against their combined HBM.
  int64_t devices = 1;
  std::vector<std::string> changed_passes;
  StageTimes times;
};

// The tiling limits a plan for options.chip is made under: its scoped
// VMEM (options.scoped_vmem_bytes, or the chip's) and MXU size.
fusion::TilingOptions TilingOptionsFor(const CompileOptions& options, const runtime::ChipSpec& chip);

// Buffers and cost for `plan`, a plan of prepared.module's entry with its
// kernels formed and tiled (any kind, e.g. an autotuner's): what
// PlanPrepared does after planning. times.planning_ms is left to the caller.
Result<CompiledPlan> CompletePlan(const PreparedModule& prepared, const CompileOptions& options,
                                  fusion::FusionPlan plan);

// Plans `prepared` with options.plan on options.chip (CheckPlanFits says
// when it may not).
Result<CompiledPlan> PlanPrepared(const PreparedModule& prepared, const CompileOptions& options);

// PreparePasses then PlanPrepared; the module is modified in place.
Result<CompiledPlan> PlanModule(hlo::Module& module, const CompileOptions& options);

}  // namespace kiln::driver
