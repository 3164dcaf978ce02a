#include "runtime/timing/simulate_as_run.h"

#include <string>

#include "runtime/chip/chip_spec.h"
#include "runtime/timing/timed_slice_execution.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::runtime::timing {

Result<DeviceProfile> SimulateAsRun(const LoadedProgram& program) {
  const ChipSpec* chip = FindChip(program.program().chip);
  if (chip == nullptr) return DataLossError("the program targets unknown chip '" + program.program().chip + "'");
  KILN_ASSIGN_OR_RETURN(TimingOptions options, ProgramSliceTiming(program.program(), *chip));
  return SimulateProgram(program, *chip, options);
}

}  // namespace kiln::runtime::timing
