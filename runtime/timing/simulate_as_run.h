// The device time of one run of a loaded program, timed exactly as an
// execute and `kiln run` time it: on the program's own chip and, for a
// slice program, on its slice (collectives over its ICI, beside the compute
// that does not wait for them), with loop trips and branches derived
// statically. One figure for every front door: a compile's estimate, the
// autotuner's comparisons and a run's device time are all this.
//
// Fails with the simulator's error when a loop's trip count or a branch
// depends on data (it then needs values: time a run instead), and with
// kDataLoss for an unknown chip. Pure function of the program; thread-safe.
#pragma once

#include "base/status.h"
#include "runtime/program/loaded_program.h"
#include "runtime/timing/device_profile.h"

namespace kiln::runtime::timing {

Result<DeviceProfile> SimulateAsRun(const LoadedProgram& program);

}  // namespace kiln::runtime::timing
