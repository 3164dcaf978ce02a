#include "runtime/timing/block_plan.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>

#include "runtime/chip/space_blocks.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

using Space = IterationSpace;

std::string Mib(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f MiB", bytes / (1 << 20));
  return buffer;
}

std::string JoinExtents(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

// Grid position of each space dimension: parallel dimensions first, the
// sequential (reduction) ones innermost.
std::vector<int> GridOrder(const IterationSpace& space) {
  std::vector<int> order(space.extents.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_partition(order.begin(), order.end(), [&](int s) { return !space.sequential[s]; });
  std::vector<int> position(order.size());
  for (size_t g = 0; g < order.size(); ++g) position[order[g]] = static_cast<int>(g);
  return position;
}

// Powers of two times `align` below `extent` and within `cap`, plus the
// whole extent when it is within `cap`; largest first.
std::vector<int64_t> Candidates(int64_t extent, int64_t align, int64_t cap) {
  std::vector<int64_t> out;
  if (extent <= cap) out.push_back(extent);
  for (int64_t b = align; b < extent && b <= cap; b *= 2) out.push_back(b);
  if (out.empty()) out.push_back(std::min(extent, align));
  std::sort(out.rbegin(), out.rend());
  return out;
}

double AccumulatorBytes(const IterationSpace& space, const std::vector<int64_t>& blocks) {
  if (space.kind != SpaceKind::kContraction) return 0;
  return PaddedBlockBytes(hlo::PrimitiveType::kF32, 1, blocks[Space::kM], blocks[Space::kN]);
}

BlockPlan Evaluate(const IterationSpace& space, const KernelWork& work, std::vector<int64_t> blocks,
                   const ChipSpec& chip, std::string source) {
  BlockPlan plan;
  plan.problem = MakeGridProblem(space, work, blocks, chip);
  plan.vmem_bytes = PipelineVmemBytes(plan.problem) + AccumulatorBytes(space, blocks);
  plan.cost = SimulateGrid(plan.problem, chip.hbm_bytes_per_s, chip.step_overhead_s);
  if (!work.prologue_vector_ops.empty()) {
    // A prologue is recomputed on every load of its input's blocks: how
    // often the grid loads them is known once the grid has run.
    std::vector<double> loads(work.prologue_vector_ops.size(), 1.0);
    for (size_t i = 0; i < loads.size() && i < plan.problem.streams.size(); ++i) {
      const double whole = WholeBytes(plan.problem.streams[i], plan.problem.dims);
      if (whole > 0) loads[i] = std::max(1.0, plan.cost.stream_bytes[i] / whole);
    }
    plan.problem = MakeGridProblem(space, work, blocks, chip, loads);
    plan.cost = SimulateGrid(plan.problem, chip.hbm_bytes_per_s, chip.step_overhead_s);
  }
  plan.blocks = std::move(blocks);
  plan.source = std::move(source);
  return plan;
}

// The space's stacked dimensions (none where a hand-made space leaves them
// out).
std::vector<bool> Stacked(const IterationSpace& space) {
  std::vector<bool> stacked = space.stacked;
  stacked.resize(space.extents.size(), false);
  return stacked;
}

// The executable's tiling, when its grid matches this space.
std::optional<std::vector<int64_t>> BlocksFromTiling(const IterationSpace& space,
                                                     const ProgramTiling& tiling) {
  if (tiling.grid.size() != space.extents.size() || tiling.grid.empty()) return std::nullopt;
  std::vector<int64_t> blocks;
  for (size_t i = 0; i < space.extents.size(); ++i) {
    int64_t g = tiling.grid[i];
    if (g < 1 || g > std::max<int64_t>(space.extents[i], 1)) return std::nullopt;
    blocks.push_back(CeilDiv(space.extents[i], g));
  }
  if (!StacksContiguously(space.extents, space.blockable, Stacked(space), blocks)) return std::nullopt;
  return blocks;
}

// Candidate block sizes per space dimension.
std::vector<std::vector<int64_t>> SearchSpace(const IterationSpace& space, const ChipSpec& chip) {
  const size_t rank = space.extents.size();
  std::vector<std::vector<int64_t>> options(rank);
  const int64_t mxu = std::max<int64_t>(chip.mxu_size, kLanes);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t extent = std::max<int64_t>(space.extents[i], 1);
    if (!space.blockable[i]) {
      options[i] = i < space.stacked.size() && space.stacked[i] ? Candidates(extent, 1, extent)
                                                                 : std::vector<int64_t>{1};
    } else if (space.kind == SpaceKind::kContraction) {
      if (i == Space::kM) options[i] = Candidates(extent, kLanes, 2048);
      if (i == Space::kN) options[i] = Candidates(extent, mxu, 2048);
      if (i == Space::kK) options[i] = Candidates(extent, mxu, 16384);
    } else if (rank == 1) {
      options[i] = Candidates(extent, space.sublanes * kLanes, int64_t{1} << 20);
    } else if (i < space.align.size() && space.align[i] >= kLanes) {
      options[i] = Candidates(extent, kLanes, 16384);
    } else {
      options[i] = Candidates(extent, space.sublanes, 2048);
    }
  }
  return options;
}

BlockPlan SearchBlocks(const IterationSpace& space, const KernelWork& work, const ChipSpec& chip,
                       double vmem_limit) {
  const std::vector<std::vector<int64_t>> options = SearchSpace(space, chip);
  std::optional<BlockPlan> best, smallest;
  for (std::vector<int64_t>& blocks : SpaceBlocks(space.extents, options, Stacked(space))) {
    BlockPlan plan = Evaluate(space, work, std::move(blocks), chip, "default");
    if (plan.vmem_bytes <= vmem_limit) {
      if (!best || plan.cost.seconds < best->cost.seconds * (1 - 1e-9)) best = std::move(plan);
    } else if (!smallest || plan.vmem_bytes < smallest->vmem_bytes) {
      smallest = std::move(plan);
    }
  }
  if (best) return *std::move(best);
  smallest->source = "default, over scoped VMEM";
  return *std::move(smallest);
}

}  // namespace

GridProblem MakeGridProblem(const IterationSpace& space, const KernelWork& work,
                            const std::vector<int64_t>& blocks, const ChipSpec& chip,
                            std::span<const double> loads) {
  const std::vector<int> position = GridOrder(space);
  const size_t rank = space.extents.size();
  GridProblem problem;
  problem.dims.resize(rank);
  for (size_t s = 0; s < rank; ++s) {
    problem.dims[position[s]] = GridDim{std::max<int64_t>(space.extents[s], 1), blocks[s]};
  }
  for (const SpaceArray& a : space.arrays) {
    Stream stream;
    stream.type = a.type;
    stream.output = a.output;
    for (size_t d = 0; d < a.dims.size(); ++d) {
      BlockAxis axis(-1, std::max<int64_t>(a.dims[d], 1));
      if (d < a.index.size() && a.index[d].known) {
        axis.fixed = 1;
        for (const IndexPart& part : a.index[d].parts) {
          if (part.space_dim < 0 || part.space_dim >= static_cast<int>(rank)) {
            axis.fixed *= std::max<int64_t>(part.extent, 1);
            continue;
          }
          axis.parts.push_back(
              AxisPart{position[part.space_dim], part.inner, part.extent, part.stride, part.halo});
        }
        if (!axis.parts.empty() && axis.fixed > 1) axis.parts.push_back(AxisPart{-1, 1, axis.fixed});
      }
      stream.axes.push_back(std::move(axis));
    }
    problem.streams.push_back(std::move(stream));
  }
  // Work spread evenly over the grid, except the main contraction, whose
  // blocks pay their own MXU padding; a prologue's work once per load.
  double vector_ops = work.vector_ops;
  for (size_t i = 0; i < work.prologue_vector_ops.size() && i < loads.size(); ++i) {
    vector_ops += work.prologue_vector_ops[i] * (loads[i] - 1.0);
  }
  double spread = vector_ops / chip.vector_flops;
  for (const Contraction& c : work.contractions) {
    if (&c != space.contraction) spread += MxuSeconds(c, c.gemm, chip) * c.multiplicity;
  }
  double total = 1;
  for (int64_t e : space.extents) total *= static_cast<double>(std::max<int64_t>(e, 1));
  std::optional<Contraction> main;
  if (space.contraction != nullptr) main = *space.contraction;
  problem.step_compute = [position, spread, total, main, chip](std::span<const int64_t> extents) {
    double share = 1;
    for (size_t s = 0; s < position.size(); ++s) share *= static_cast<double>(extents[position[s]]);
    double seconds = spread * share / total;
    if (main) {
      GemmShape block{static_cast<double>(extents[position[Space::kBatch]]), extents[position[Space::kM]],
                      extents[position[Space::kN]],
                      extents[position[Space::kK]]};
      seconds += MxuSeconds(*main, block, chip) * main->multiplicity;
    }
    return seconds;
  };
  return problem;
}

Result<BlockPlan> PlanBlocks(const IterationSpace& space, const KernelWork& work,
                             const ProgramTiling& tiling, const ChipSpec& chip,
                             const TimingOptions& options) {
  const double vmem_limit = static_cast<double>(
      options.scoped_vmem_bytes > 0 ? options.scoped_vmem_bytes : chip.scoped_vmem_bytes);
  if (space.kind == SpaceKind::kContraction && options.dot_tiles) {
    const DotTiles& t = *options.dot_tiles;
    std::vector<int64_t> blocks = {1, std::min(t.bm, space.extents[Space::kM]),
                                   std::min(t.bn, space.extents[Space::kN]),
                                   std::min(t.bk, space.extents[Space::kK])};
    BlockPlan plan = Evaluate(space, work, std::move(blocks), chip, "forced");
    if (plan.vmem_bytes > vmem_limit) {
      return InvalidArgumentError("dot tiles " + std::to_string(t.bm) + "," + std::to_string(t.bn) + "," +
                                  std::to_string(t.bk) + " need " + Mib(plan.vmem_bytes) +
                                  " of VMEM double-buffered, the scoped VMEM is " + Mib(vmem_limit));
    }
    return plan;
  }
  if (std::optional<std::vector<int64_t>> blocks = BlocksFromTiling(space, tiling)) {
    return Evaluate(space, work, *std::move(blocks), chip, "executable");
  }
  if (options.strict_tiling && !tiling.grid.empty()) {
    return FailedPreconditionError("strict tiling: the executable's grid " + JoinExtents(tiling.grid) +
                                   " does not fit the kernel's iteration space " + JoinExtents(space.extents) +
                                   "; the carried tile would not be the tile timed");
  }
  return SearchBlocks(space, work, chip, vmem_limit);
}

}  // namespace kiln::runtime::timing
