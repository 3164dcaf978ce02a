// Times one kernel: work analysis, iteration space, blocks, grid.
//
// Tiled kernels go through the block pipeline (grid_model.h); untiled ones
// (control flow, sort, scatter, gather, custom calls, collectives) run from
// HBM as a whole: max(compute, traffic) plus a step overhead per loop
// iteration. Every kernel pays the chip's launch overhead. The profile
// carries the kernel's ideal bytes (every input and output once) beside
// the bytes it moves, and the inputs its grid reads more than once.
//
// On a slice of several chips (TimingOptions::topology), a kernel holding a
// collective is timed as an untiled kernel whose HBM traffic overlaps the
// collective's ICI transfers (collective_time.h): launch overhead plus the
// longest of compute, HBM and ICI. The -done kernel of an async pair costs
// its launch only, so a pair's transfer is counted once.
//
// Pure function; thread-safe. Borrows its arguments for the call.
#pragma once

#include <span>
#include <string>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/format/program.h"
#include "runtime/timing/device_profile.h"
#include "runtime/timing/kernel_work.h"
#include "runtime/timing/timing_options.h"

namespace kiln::runtime::timing {

struct KernelDescription {
  std::string_view name;
  std::string_view kind;
  const hlo::Module* module = nullptr;
  std::span<const hlo::Shape* const> inputs;   // entry parameter i's array
  std::span<const hlo::Shape* const> outputs;  // the root's arrays
  const ProgramTiling* tiling = nullptr;       // may be null or empty
};

// `counts`: control flow observed by the executor, or nullptr to derive it
// statically (errors on data-dependent loops and branches). Errors name the
// kernel.
Result<KernelProfile> TimeKernel(const KernelDescription& kernel, const ChipSpec& chip,
                                 const TimingOptions& options,
                                 const ControlFlowCounts* counts = nullptr);

}  // namespace kiln::runtime::timing
