// Options of the timing simulator (the `kiln run` flags that steer it).
//
// Plain values; thread-compatible. ParseDotTiles is a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"
#include "runtime/chip/topology.h"
#include "runtime/timing/collective_groups.h"

namespace kiln::runtime::timing {

// Block shape forced on every dot/convolution kernel (`--dot-tiles BM,BN,BK`).
struct DotTiles {
  int64_t bm = 0;
  int64_t bn = 0;
  int64_t bk = 0;
  bool operator==(const DotTiles&) const = default;
};

struct TimingOptions {
  // Overrides the block shape of every contraction kernel, whatever the
  // executable's tiling says. A shape that needs more than the scoped VMEM
  // is an error.
  std::optional<DotTiles> dot_tiles;
  // Scoped VMEM a kernel's double-buffered blocks may use; 0 means the
  // chip's default (ChipSpec::scoped_vmem_bytes).
  int64_t scoped_vmem_bytes = 0;
  // Time exactly the tiling each kernel carries: a kernel whose executable
  // tiling (a non-empty grid) does not fit its iteration space is an error
  // naming the kernel, instead of being timed with searched blocks. For the
  // autotuner's candidates, whose tile must be the tile timed. Off by
  // default: heuristic executables are timed as they always were. Kernels
  // that carry no tiling are still timed with searched blocks.
  bool strict_tiling = false;
  // While-loop iterations per kernel beyond which timing gives up with a
  // "step budget" error (runaway loops).
  double iteration_budget = static_cast<double>(int64_t{1} << 34);
  // The slice the program runs on, one copy per chip (`--topology 2x4`);
  // nullopt or one chip: collectives are timed as local copies, as on a
  // single chip. On a slice, collective kernels are timed over its ICI
  // (collective_time.h), with `assignment` saying how the program's
  // replicas and partitions fill it.
  std::optional<Topology> topology;
  SliceAssignment assignment;

  // The topology's chips, or 1.
  int64_t chips() const { return topology ? topology->chips() : 1; }
};

// Parses "BM,BN,BK" (three positive integers); the error quotes the text.
Result<DotTiles> ParseDotTiles(std::string_view text);

}  // namespace kiln::runtime::timing
