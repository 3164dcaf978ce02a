#include "runtime/timing/grid_model.h"

#include <algorithm>

#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

// Which dimensions a stream's block index depends on.
bool Follows(const Stream& stream, const std::vector<bool>& moved) {
  for (const BlockAxis& axis : stream.axes) {
    if (axis.grid_dim >= 0 && moved[axis.grid_dim]) return true;
  }
  return false;
}

double InputBytes(const GridProblem& problem, const std::vector<bool>* moved,
                  std::span<const int64_t> extents) {
  double total = 0;
  for (const Stream& s : problem.streams) {
    if (s.output || (moved != nullptr && !Follows(s, *moved))) continue;
    total += BlockBytes(s, extents);
  }
  return total;
}

// Steps during which an output block stays resident: the product of the
// grid dimensions inside its innermost followed dimension. Its write-back
// is double-buffered, so it overlaps that many steps of the next block.
std::vector<double> OutputRuns(const GridProblem& problem, const std::vector<int64_t>& count) {
  std::vector<double> runs;
  for (const Stream& s : problem.streams) {
    int innermost = -1;
    for (const BlockAxis& axis : s.axes) innermost = std::max(innermost, axis.grid_dim);
    double run = 1;
    for (size_t i = static_cast<size_t>(innermost + 1); i < count.size(); ++i) {
      run *= static_cast<double>(count[i]);
    }
    runs.push_back(run);
  }
  return runs;
}

// Output bytes one step writes back: each output block spread over its run.
double OutputShare(const GridProblem& problem, const std::vector<double>& runs,
                   std::span<const int64_t> extents) {
  double total = 0;
  for (size_t i = 0; i < problem.streams.size(); ++i) {
    if (problem.streams[i].output) total += BlockBytes(problem.streams[i], extents) / runs[i];
  }
  return total;
}

struct Accumulator {
  GridCost cost;
  double bandwidth;
  double overhead;

  // `count` steady steps with the given compute and transfers.
  void AddSteps(double count, double compute, double transfer_bytes) {
    double transfer = transfer_bytes / bandwidth;
    cost.seconds += count * std::max(compute + overhead, transfer);
    cost.compute_seconds += count * compute;
    cost.transfer_seconds += count * transfer;
    cost.overhead_seconds += count * overhead;
    cost.bytes += count * transfer_bytes;
    cost.steps += count;
  }
};

}  // namespace

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
    dims.push_back(axis.grid_dim >= 0 ? extents[axis.grid_dim] : axis.fixed);
  }
  if (dims.size() <= 1) return PaddedFlatBytes(stream.type, dims.empty() ? 1.0 : dims[0]);
  RowsLanes split = SplitMinor(dims);
  return PaddedBlockBytes(stream.type, split.planes, split.rows, split.lanes);
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
  Accumulator acc{{}, hbm_bytes_per_s, step_overhead_s};
  const std::vector<double> runs = OutputRuns(problem, count);

  // Step 0: every input block is fetched before compute starts.
  std::vector<int64_t> first(block);
  double fill_bytes = InputBytes(problem, nullptr, first);
  acc.cost.seconds += fill_bytes / hbm_bytes_per_s;
  acc.cost.transfer_seconds += fill_bytes / hbm_bytes_per_s;
  acc.cost.bytes += fill_bytes;
  acc.AddSteps(1, problem.step_compute(first), OutputShare(problem, runs, first));

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
      double transfer = InputBytes(problem, &moved, extents) + OutputShare(problem, runs, extents);
      acc.AddSteps(steps, problem.step_compute(extents), transfer);
    }
  }

  // Drain: the last output blocks finish writing after the last step (their
  // bytes are already counted in the steps' shares).
  double drain_bytes = 0;
  for (const Stream& s : problem.streams) {
    if (s.output) drain_bytes += BlockBytes(s, tail);
  }
  acc.cost.seconds += drain_bytes / hbm_bytes_per_s;
  return acc.cost;
}

}  // namespace kiln::runtime::timing
