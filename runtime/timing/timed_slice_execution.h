// A timed run of a per-device program on every chip of a simulated slice.
//
// ExecuteTimed's counterpart for programs compiled for a topology: every
// chip runs the program on its own arguments (runtime/spmd), collectives
// exchanging real values, and the device time comes from chip 0's control
// flow (every chip runs the same kernels; SPMD) with collectives priced over
// the slice's ICI by the timer's TimingOptions. Concurrent calls sharing one
// LoadedProgram and ProgramTimer are safe.
#pragma once

#include <span>
#include <vector>

#include "runtime/spmd/slice_execution.h"
#include "runtime/timing/timed_execution.h"

namespace kiln::runtime::timing {

struct TimedSliceExecution {
  std::vector<hlo::Literal> results;  // chip d's result at [d]
  Result<DeviceProfile> profile;      // an error leaves `results` valid
};

// `base` with the slice `program` was compiled for (its topology, parsed
// for `chip`, and its replicas x partitions); `base` itself for a one-chip
// program.
Result<TimingOptions> ProgramSliceTiming(const Program& program, const ChipSpec& chip, TimingOptions base = {});

// The replicas x partitions of a program's slice.
SliceShape ProgramSliceShape(const Program& program, int64_t chips);

// args[d] are chip d's arguments; `slice` must hold args.size() chips.
Result<TimedSliceExecution> ExecuteTimedOnSlice(const LoadedProgram& program, const ProgramTimer& timer,
                                                SliceShape slice, std::span<const std::vector<hlo::Literal>> args,
                                                const EvalOptions& options = {});

}  // namespace kiln::runtime::timing
