// The device-time estimate a compile answers: the timing simulator's time
// of one run of the executable just lowered (runtime/timing/simulate_as_run.h),
// so a compile, the autotuner and a run report the same kind of figure and
// a tuned entry, timed the same way, never looks slower than the entry it
// replaced. The planner's cost model stays in cost_model_us.
//
// EstimateDeviceTime sets out.estimated_us and out.estimate_source
// ("simulator"); when the simulator cannot time the program without values
// (a loop whose trips depend on data) it keeps the cost model's figure,
// sets estimate_source "cost_model" and says why in estimate_note. Its time
// is estimate_ms, added to compile_ms (what a cache hit saves). Never
// fails. Thread-safe for distinct outputs.
#pragma once

#include "compiler/driver/compile_module.h"

namespace kiln::driver {

void EstimateDeviceTime(CompileOutput& out);

}  // namespace kiln::driver
