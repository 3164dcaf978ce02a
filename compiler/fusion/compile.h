// PlanModule: the compiler's planning entry point. Runs the pass pipeline
// on the module (in place; for plans other than `given` it first inlines
// XLA's fusion instructions, so every plan but `given` starts from the
// unfused graph), plans fusion on the entry computation, chooses
// tiles, assigns HBM buffers and estimates device time.
//
// The returned plan indexes the entry computation of `module` as it is
// after the passes; keep the module alive and unmodified while the plan is
// used. Errors name the stage: "pass cse: ...", "after pass dce: <verifier
// error>", "planning: ...", "buffer assignment: program needs ... of HBM",
// "unknown chip 'v9'". The module must already have passed the verifier.
// Thread-safe for different modules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/buffer_assignment.h"
#include "compiler/fusion/cost_model.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/fusion/planner.h"
#include "compiler/hlo/module.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::fusion {

struct CompileOptions {
  PlanKind plan = PlanKind::kHeuristic;
  std::string chip = "v5e";
  // Scoped VMEM per kernel; 0 takes the chip's default (16 MiB).
  int64_t scoped_vmem_bytes = 0;
  bool run_passes = true;
  // Verify after every pass (on in test builds).
#ifdef NDEBUG
  bool verify_passes = false;
#else
  bool verify_passes = true;
#endif
};

struct StageTimes {
  double passes_ms = 0;
  double planning_ms = 0;  // edges, kernels and tiles
  double buffers_ms = 0;
  double cost_ms = 0;
};

struct CompiledPlan {
  const runtime::ChipSpec* chip = nullptr;  // static table entry
  FusionPlan plan;
  BufferAssignment buffers;
  PlanCost cost;
  double estimated_us = 0;
  // Chips the module's sharding annotations spread it over (sharding.h);
  // buffers are checked against their combined HBM.
  int64_t devices = 1;
  std::vector<std::string> changed_passes;
  StageTimes times;
};

// "none", "heuristic", "given" (case-sensitive).
Result<PlanKind> ParsePlanKind(std::string_view name);

Result<CompiledPlan> PlanModule(hlo::Module& module, const CompileOptions& options);

}  // namespace kiln::fusion
