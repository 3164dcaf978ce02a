// Choosing a kernel's blocks and pricing its grid.
//
// The blocks come, in order of precedence, from TimingOptions::dot_tiles
// (contraction kernels only), from the executable's own tiling when it fits
// the kernel's iteration space (under strict_tiling: it must fit), or from a search of aligned candidates
// (powers of two times the MXU size, sublane tile or 128 lanes, and the
// whole dimension; any power of two for the stacked leading dimensions,
// runtime/chip/space_blocks.h) that fit the scoped VMEM double-buffered;
// the search keeps the fastest. For 8192^3 bf16 on v5e it lands on 1024-class blocks;
// for a memory-bound [128,8192]x[8192,8192] it takes the whole K so the lhs
// is fetched once.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/format/program.h"
#include "runtime/timing/grid_model.h"
#include "runtime/timing/kernel_space.h"
#include "runtime/timing/kernel_work.h"
#include "runtime/timing/timing_options.h"

namespace kiln::runtime::timing {

struct BlockPlan {
  std::vector<int64_t> blocks;  // per space dimension
  GridProblem problem;
  GridCost cost;
  double vmem_bytes = 0;
  std::string source;  // "forced", "executable" or "default"
};

// The grid of `space` cut into `blocks`; step compute from `work`, its
// prologue's vector ops charged `loads[i]` times for input i (once when
// `loads` is empty or shorter).
GridProblem MakeGridProblem(const IterationSpace& space, const KernelWork& work,
                            const std::vector<int64_t>& blocks, const ChipSpec& chip,
                            std::span<const double> loads = {});

// Errors for forced dot tiles that exceed the scoped VMEM (the message
// gives both sizes) and, under TimingOptions::strict_tiling, for an
// executable tiling whose grid does not fit `space` (kFailedPrecondition,
// both shapes in the message). `space` must not be kUntiled.
Result<BlockPlan> PlanBlocks(const IterationSpace& space, const KernelWork& work,
                             const ProgramTiling& tiling, const ChipSpec& chip,
                             const TimingOptions& options);

}  // namespace kiln::runtime::timing
