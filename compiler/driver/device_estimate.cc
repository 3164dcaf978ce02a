#include "compiler/driver/device_estimate.h"

#include <memory>

#include "compiler/driver/stopwatch.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/simulate_as_run.h"

namespace kiln::driver {
namespace {

// The simulator's time of one run, or why there is none.
Result<double> SimulatedUs(const runtime::Program& program) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::LoadedProgram> loaded, runtime::LoadedProgram::Load(program));
  KILN_ASSIGN_OR_RETURN(runtime::timing::DeviceProfile profile, runtime::timing::SimulateAsRun(*loaded));
  return profile.seconds * 1e6;
}

}  // namespace

void EstimateDeviceTime(CompileOutput& out) {
  Stopwatch watch;
  Result<double> simulated = SimulatedUs(out.program);
  if (simulated) {
    out.estimated_us = *simulated;
    out.estimate_source = "simulator";
    out.estimate_note.clear();
  } else {
    out.estimated_us = out.cost_model_us;
    out.estimate_source = "cost_model";
    out.estimate_note = simulated.error().ToString();
  }
  out.estimate_ms = watch.LapMs();
  out.compile_ms += out.estimate_ms;
}

}  // namespace kiln::driver
