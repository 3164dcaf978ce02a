// TimeModuleText: compiles HLO text for a chip (per chip of the most
// compact slice when the module carries shardings) and times it with the
// timing simulator, without values: what the issue-15 benches print rows
// of. Fails with the stage's error (parse, slice, compile, load, timing).
// Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "runtime/timing/device_profile.h"

namespace kiln::bench {

struct TimedModule {
  runtime::timing::DeviceProfile profile;
  int64_t devices = 1;      // devices the module's shardings name
  std::string topology;     // the slice a sharded module runs on, one program per chip
  bool has_matmul = false;  // a dot or convolution anywhere
};

Result<TimedModule> TimeModuleText(std::string_view text, std::string_view name, std::string_view chip,
                                   fusion::PlanKind plan = fusion::PlanKind::kHeuristic);

// The kernel that moves the most bytes per ideal byte among those without
// MXU work (a contraction's panels are re-read by design), or null.
const runtime::timing::KernelProfile* WorstNonContraction(const runtime::timing::DeviceProfile& profile);

// "name 51.6%, name 21.5%": the `top` kernels that take the most time, with
// their share of the device time.
std::string TopKernels(const runtime::timing::DeviceProfile& profile, int top);

}  // namespace kiln::bench
