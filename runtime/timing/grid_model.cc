#include "runtime/timing/grid_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

// Which dimensions a stream's block index depends on.
bool Follows(const Stream& stream, const std::vector<bool>& moved) {
  for (const BlockAxis& axis : stream.axes) {
    for (const AxisPart& part : axis.parts) {
      if (part.grid_dim >= 0 && moved[part.grid_dim]) return true;
    }
  }
  return false;
}

// Elements of one part in a block of `block` grid elements.
int64_t PartBlock(const AxisPart& part, int64_t block) {
  const int64_t inner = std::max<int64_t>(part.inner, 1);
  return std::clamp<int64_t>(CeilDiv(std::max<int64_t>(block, 1), inner) * std::max<int64_t>(part.stride, 1) +
                                 std::max<int64_t>(part.halo, 0),
                             1, std::max<int64_t>(part.extent, 1));
}

// The share of the grid's steps whose blocks overlap the stream: below 1
// when the stream spans less than a grid dimension (its parts along it
// multiply to less than the extent, e.g. one operand of a concatenate).
double Coverage(const Stream& stream, const std::vector<int64_t>& count, const std::vector<int64_t>& block,
                const GridProblem& problem) {
  double share = 1;
  for (size_t g = 0; g < problem.dims.size(); ++g) {
    double span = 1;
    int64_t finest = std::numeric_limits<int64_t>::max();
    bool follows = false;
    for (const BlockAxis& axis : stream.axes) {
      for (const AxisPart& part : axis.parts) {
        if (part.grid_dim != static_cast<int>(g)) continue;
        follows = true;
        span *= static_cast<double>(std::max<int64_t>(part.extent, 1)) /
                static_cast<double>(std::max<int64_t>(part.stride, 1));
        finest = std::min(finest, std::max<int64_t>(part.inner, 1));
      }
    }
    if (!follows || count[g] <= 1) continue;
    span *= static_cast<double>(finest);
    const double extent = static_cast<double>(problem.dims[g].extent);
    if (span >= extent) continue;
    const double touched = std::ceil(span / static_cast<double>(block[g]));
    share *= std::min(1.0, touched / static_cast<double>(count[g]));
  }
  return share;
}

// Steps during which an output block stays resident: the product of the
// grid dimensions inside its innermost followed dimension. Its write-back
// is double-buffered, so it overlaps that many steps of the next block.
std::vector<double> OutputRuns(const GridProblem& problem, const std::vector<int64_t>& count) {
  std::vector<double> runs;
  for (const Stream& s : problem.streams) {
    int innermost = -1;
    for (const BlockAxis& axis : s.axes) {
      for (const AxisPart& part : axis.parts) innermost = std::max(innermost, part.grid_dim);
    }
    double run = 1;
    for (size_t i = static_cast<size_t>(innermost + 1); i < count.size(); ++i) {
      run *= static_cast<double>(count[i]);
    }
    runs.push_back(run);
  }
  return runs;
}

struct Accumulator {
  const GridProblem& problem;
  const std::vector<double>& runs;
  const std::vector<double>& coverage;
  GridCost cost;
  double bandwidth;
  double overhead;
  std::vector<double> step_bytes;  // scratch: per stream, one step

  // Bytes each stream moves in one step: inputs whose block index changed
  // (all of them when `moved` is null), each output block spread over its run.
  double StepBytes(const std::vector<bool>* moved, std::span<const int64_t> extents, bool inputs, bool outputs) {
    double total = 0;
    step_bytes.assign(problem.streams.size(), 0);
    for (size_t i = 0; i < problem.streams.size(); ++i) {
      const Stream& s = problem.streams[i];
      double bytes = 0;
      if (s.output && outputs) {
        bytes = BlockBytes(s, extents) / runs[i];
      } else if (!s.output && inputs && (moved == nullptr || Follows(s, *moved))) {
        bytes = BlockBytes(s, extents);
      }
      step_bytes[i] = bytes * coverage[i];
      total += step_bytes[i];
    }
    return total;
  }

  void CountBytes(double count) {
    for (size_t i = 0; i < step_bytes.size(); ++i) cost.stream_bytes[i] += count * step_bytes[i];
  }

  // `count` steady steps with the given compute and the transfers of the
  // last StepBytes.
  void AddSteps(double count, double compute, double transfer_bytes) {
    double transfer = transfer_bytes / bandwidth;
    cost.seconds += count * std::max(compute + overhead, transfer);
    cost.compute_seconds += count * compute;
    cost.transfer_seconds += count * transfer;
    cost.overhead_seconds += count * overhead;
    cost.bytes += count * transfer_bytes;
    cost.steps += count;
    CountBytes(count);
  }
};

}  // namespace

BlockAxis::BlockAxis(int grid_dim, int64_t fixed_extent) : fixed(fixed_extent) {
  if (grid_dim >= 0) parts.push_back(AxisPart{grid_dim, 1, std::numeric_limits<int64_t>::max()});
}

int64_t GridDim::count() const {
  int64_t b = std::clamp<int64_t>(block, 1, std::max<int64_t>(extent, 1));
  return CeilDiv(std::max<int64_t>(extent, 1), b);
}

int64_t GridDim::tail() const {
  int64_t b = std::clamp<int64_t>(block, 1, std::max<int64_t>(extent, 1));
  return std::max<int64_t>(extent, 1) - (count() - 1) * b;
}

double BlockBytes(const Stream& stream, std::span<const int64_t> extents) {
  std::vector<int64_t> dims;
  dims.reserve(stream.axes.size());
  for (const BlockAxis& axis : stream.axes) {
    if (axis.parts.empty()) {
      // A dimension of extent 1 holds no data: it is not one of the tiled
      // (minor) dimensions.
      if (axis.fixed > 1) dims.push_back(axis.fixed);
      continue;
    }
    int64_t block = 1;
    for (const AxisPart& part : axis.parts) {
      block *= part.grid_dim >= 0 ? PartBlock(part, extents[part.grid_dim]) : std::max<int64_t>(part.extent, 1);
    }
    dims.push_back(block);
  }
  if (dims.size() <= 1) return PaddedFlatBytes(stream.type, dims.empty() ? 1.0 : dims[0]);
  RowsLanes split = SplitMinor(dims);
  return PaddedBlockBytes(stream.type, split.planes, split.rows, split.lanes);
}

double WholeBytes(const Stream& stream, std::span<const GridDim> dims) {
  std::vector<int64_t> extents;
  for (const GridDim& d : dims) extents.push_back(std::max<int64_t>(d.extent, 1));
  return BlockBytes(stream, extents);
}

double PipelineVmemBytes(const GridProblem& problem) {
  std::vector<int64_t> full;
  for (const GridDim& d : problem.dims) full.push_back(std::min(d.block, d.extent));
  double total = 0;
  for (const Stream& s : problem.streams) total += 2 * BlockBytes(s, full);
  return total;
}

GridCost SimulateGrid(const GridProblem& problem, double hbm_bytes_per_s, double step_overhead_s) {
  const size_t rank = problem.dims.size();
  std::vector<int64_t> count(rank), block(rank), tail(rank);
  std::vector<size_t> ragged;  // dimensions whose last block is short
  for (size_t i = 0; i < rank; ++i) {
    const GridDim& d = problem.dims[i];
    count[i] = d.count();
    tail[i] = d.tail();
    block[i] = count[i] == 1 ? tail[i] : std::clamp<int64_t>(d.block, 1, d.extent);
    if (count[i] > 1 && tail[i] != block[i]) ragged.push_back(i);
  }
  const std::vector<double> runs = OutputRuns(problem, count);
  std::vector<double> coverage;
  for (const Stream& s : problem.streams) coverage.push_back(Coverage(s, count, block, problem));
  Accumulator acc{problem, runs, coverage, {}, hbm_bytes_per_s, step_overhead_s, {}};
  acc.cost.stream_bytes.assign(problem.streams.size(), 0);

  // Step 0: every input block is fetched before compute starts.
  std::vector<int64_t> first(block);
  double fill_bytes = acc.StepBytes(nullptr, first, /*inputs=*/true, /*outputs=*/false);
  acc.CountBytes(1);
  acc.cost.seconds += fill_bytes / hbm_bytes_per_s;
  acc.cost.transfer_seconds += fill_bytes / hbm_bytes_per_s;
  acc.cost.bytes += fill_bytes;
  double first_out = acc.StepBytes(nullptr, first, /*inputs=*/false, /*outputs=*/true);
  acc.AddSteps(1, problem.step_compute(first), first_out);

  // Later steps, by the outermost dimension `j` that moved and by which
  // ragged dimensions sit at their last block.
  std::vector<int64_t> extents(rank);
  std::vector<bool> moved(rank);
  for (size_t j = 0; j < rank; ++j) {
    if (count[j] < 2) continue;
    for (size_t i = 0; i < rank; ++i) moved[i] = i == j || (i > j && count[i] > 1);
    for (uint64_t pattern = 0; pattern < (uint64_t{1} << ragged.size()); ++pattern) {
      double steps = 1;
      for (size_t i = 0; i < rank && steps > 0; ++i) {
        auto r = std::find(ragged.begin(), ragged.end(), i);
        bool is_ragged = r != ragged.end();
        bool at_tail = is_ragged && ((pattern >> (r - ragged.begin())) & 1);
        extents[i] = at_tail ? tail[i] : block[i];
        if (i < j) {
          steps *= at_tail ? 1 : static_cast<double>(count[i] - (is_ragged ? 1 : 0));
        } else if (i == j) {  // index 1 .. count-1
          steps *= at_tail ? 1 : static_cast<double>(count[i] - (is_ragged ? 2 : 1));
        } else {  // wrapped to index 0
          steps *= at_tail ? 0 : 1;
        }
      }
      if (steps <= 0) continue;
      double transfer = acc.StepBytes(&moved, extents, /*inputs=*/true, /*outputs=*/true);
      acc.AddSteps(steps, problem.step_compute(extents), transfer);
    }
  }

  // Drain: the last output blocks finish writing after the last step (their
  // bytes are already counted in the steps' shares).
  double drain_bytes = 0;
  for (size_t i = 0; i < problem.streams.size(); ++i) {
    if (problem.streams[i].output) drain_bytes += BlockBytes(problem.streams[i], tail) * coverage[i];
  }
  acc.cost.seconds += drain_bytes / hbm_bytes_per_s;
  return acc.cost;
}

}  // namespace kiln::runtime::timing
