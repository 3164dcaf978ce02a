// The block pipeline of one kernel: a grid of steps, each moving blocks
// between HBM and VMEM and computing on them.
//
// The grid is walked in row-major order (the last dimension fastest). A
// stream is one array the kernel reads (input) or writes (output); each of
// its dimensions follows one or more grid dimensions (the parts a reshape
// splits or merges; block extent, smaller at the ragged edge) or is taken
// whole. A block is transferred when its index changes, i.e. when a grid
// dimension it follows moves; an input block whose index does not change
// between steps is not fetched again, and one taken whole along a
// dimension is fetched again whenever the grid moves elsewhere (a dot's
// panels). A stream narrower than the grid along a dimension (an operand
// of a concatenate or pad) is moved only by the steps whose blocks overlap
// it. An output block
// is written back once, after the steps that produce it; its write-back
// overlaps (double-buffered) the steps of the next block, so its bytes are
// spread over them. Transfers move whole memory tiles (tpu_tiles.h).
//
// Timing with double buffering: the first step's inputs are fetched before
// any compute (fill); every step then costs max(compute + step overhead,
// its transfers), because DMA runs while the core computes and does its
// per-step bookkeeping; the last output block's write-back is exposed
// (drain).
//
// Steps are grouped into classes with identical cost (which grid dimension
// moved, which dimensions are at their ragged edge), so a grid of millions
// of steps is priced in O(dims x 2^ragged dims x streams).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "compiler/hlo/primitive_type.h"

namespace kiln::runtime::timing {

struct GridDim {
  int64_t extent = 1;  // elements along this dimension
  int64_t block = 1;   // elements per step (clamped to extent)
  int64_t count() const;  // grid steps along the dimension
  int64_t tail() const;   // extent of the last block
};

// A stretch of one grid dimension that a stream dimension follows: indices
// `inner`, 2*`inner`, ... of it, at most `extent` of them (kernel_indexing.h
// IndexPart). A block takes ceil(block / inner) of them.
struct AxisPart {
  int grid_dim = -1;
  int64_t inner = 1;
  int64_t extent = std::numeric_limits<int64_t>::max();
  int64_t stride = 1;  // elements per grid index (kernel_indexing.h: IndexPart::stride)
  int64_t halo = 0;    // elements a block reads past them (IndexPart::halo)
};

// One dimension of a stream's block: the product of its parts, or `fixed`
// elements (the whole dimension) when it follows no grid dimension.
struct BlockAxis {
  BlockAxis() = default;
  // Follows all of `grid_dim` (block = the grid block), or is `fixed`
  // elements when `grid_dim` is -1.
  BlockAxis(int grid_dim, int64_t fixed);
  std::vector<AxisPart> parts;
  int64_t fixed = 1;
};

struct Stream {
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  std::vector<BlockAxis> axes;  // major to minor, as the array is laid out
  bool output = false;
};

struct GridProblem {
  std::vector<GridDim> dims;
  std::vector<Stream> streams;
  // Seconds of compute for one step whose blocks have the given extents
  // (one per grid dimension).
  std::function<double(std::span<const int64_t> extents)> step_compute;
};

struct GridCost {
  double seconds = 0;           // fill + steps + drain, without launch
  double compute_seconds = 0;   // sum of step compute
  double transfer_seconds = 0;  // all bytes at HBM bandwidth
  double overhead_seconds = 0;  // steps x step overhead
  double bytes = 0;             // bytes moved between HBM and VMEM
  double steps = 0;
  std::vector<double> stream_bytes;  // `bytes` per stream
};

// Bytes of one stream block at the given grid extents (tile-padded).
double BlockBytes(const Stream& stream, std::span<const int64_t> extents);

// Bytes of the whole array a stream moves (every dimension at its extent
// in `dims`), tile-padded: what reading or writing it once costs.
double WholeBytes(const Stream& stream, std::span<const GridDim> dims);

// VMEM the pipeline needs: two buffers of every stream's full block.
double PipelineVmemBytes(const GridProblem& problem);

GridCost SimulateGrid(const GridProblem& problem, double hbm_bytes_per_s, double step_overhead_s);

}  // namespace kiln::runtime::timing
