// How a kernel's arrays follow its iteration space: the one mapping the
// compiler's tiling and the timing simulator share, so that a block of the
// grid reads only the slice of each operand it needs.
//
// The iteration space of a kernel:
//  - kLoop: the dimensions of its largest output;
//  - kReduce: the dimensions of the operand of its main reduce, the reduced
//    ones walked sequentially;
//  - kContraction: the GEMM (batch, m, n, k) of its main dot or convolution
//    (a convolution is its implicit GEMM: m = batch x output spatial, n =
//    output features per group, k the sequential window x input features).
// Every array the kernel reads or writes is mapped dimension by dimension
// onto the space by following the data through the kernel's instructions
// (and the fusions they call): elementwise ops, converts and copies keep
// dimensions; transposes permute them; broadcasts add dimensions the
// operand does not have; reshapes and bitcasts split and merge them;
// slices, pads, concatenates and windows resize them; reduces drop the
// reduced ones; dots tie their operands' batch, free and contracting
// dimensions to the result and to each other. An array dimension is then a
// product of parts, each a stretch of one space dimension; a dimension the
// walk cannot place is "unknown" and is taken whole by every block (an
// operand that truly is needed whole per step is re-read as the grid moves,
// and the timing model reports it). An output the walk cannot reach from
// the space through data (a broadcast constant written beside the result)
// but shaped like the space, or like a reduce's kept dimensions, is written
// by the same loop and follows it index for index. The blockable
// dimensions are those an array lays out among its two tiled (minor)
// dimensions, leaving out dimensions of extent 1, which hold no data.
//
// Pure functions over an immutable module; results borrow nothing.
// Thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/memory_tiles.h"
#include "runtime/chip/op_kinds.h"

namespace kiln::runtime {

// One factor of an array dimension: indices `inner`, 2*`inner`, ... of
// space dimension `space_dim`, `extent` of them. A dimension split by a
// reshape has a part per piece (the minor piece with inner 1); a dimension
// merging several space dimensions has a part for each.
struct IndexPart {
  int space_dim = -1;
  int64_t inner = 1;
  int64_t extent = 1;
  // A window's operand: each space index spans `stride` indices of the
  // array dimension (a stride-2 pool reads two input rows per result row),
  // and a block reads `halo` more past them (the window's overlap, size -
  // stride: 8 rows of a 3x3 convolution read 10). Never regrouped.
  int64_t stride = 1;
  int64_t halo = 0;
  bool operator==(const IndexPart&) const = default;
};

// How a window's operand dimension is read for its result's: each result
// index spans `stride` operand indices, and a block of results reads
// `halo` more (the window's extent past its stride: 2 for a 3x3 window of
// stride 1, the whole input for a weight gradient's window).
struct WindowReach {
  int64_t stride = 1;
  int64_t halo = 0;
};

// One array dimension: known (the product of `parts`, major to minor; no
// parts for an extent of 1) or unknown (taken whole).
struct DimIndex {
  bool known = false;
  std::vector<IndexPart> parts;
  bool operator==(const DimIndex&) const = default;
};

// Per logical dimension of one array.
using ArrayIndex = std::vector<DimIndex>;

struct KernelIndexing {
  SpaceKind kind = SpaceKind::kUntiled;
  std::vector<int64_t> extents;  // per space dimension
  std::vector<bool> sequential;  // reduced dimensions and k: walked innermost
  // Dimensions whose block may exceed 1: m, n, k of a contraction; for loop
  // and reduce spaces the space's two minor dimensions (as the array the
  // space is lays them out: the anchor output, the reduce's operand) and
  // every dimension that one of the arrays lays out among its two minor
  // (tiled) dimensions.
  std::vector<bool> blockable;
  // What a block of each blockable dimension is a multiple of, unless it is
  // whole: 128 lanes for the space's minor dimension and for any dimension
  // an array lays out as its minor one, otherwise the largest sublane tile
  // among the arrays. 1 for contractions (their blocks follow the MXU).
  std::vector<int64_t> align;
  // Loop and reduce spaces: the other dimensions of extent over 1, whose
  // blocks stack whole tiles (runtime/chip/space_blocks.h); a contraction's
  // batch of more than one, whose blocks stack whole GEMMs (m, n and k
  // whole).
  std::vector<bool> stacked;
  std::vector<ArrayIndex> inputs;   // one per input, in order
  std::vector<ArrayIndex> outputs;  // one per output, in order
  // Contraction dimension numbers.
  static constexpr int kBatch = 0, kM = 1, kN = 2, kK = 3;
};

// The mapping of a kernel whose arrays are `inputs` (values it reads; the
// walk stops there) and `outputs` (values it writes; the kernel is every
// instruction they reach through operands before an input, plus the
// fusions and calls those make). `anchor`: kLoop the output the space is
// (one of `outputs`), kReduce the reduce, kContraction the dot or
// convolution. A tuple-valued input or output is mapped through its first
// element. kUntiled gives an empty space and unknown dimensions.
KernelIndexing IndexKernel(SpaceKind kind, const hlo::Instruction* anchor,
                           std::span<const hlo::Instruction* const> inputs,
                           std::span<const hlo::Instruction* const> outputs);

// Elements of array dimension `dim` in a block of the space with `blocks`
// elements per space dimension (`dim_extent` when it is unknown): each
// part takes ceil(block / inner) x stride + halo of its indices, at least 1
// and at most its extent.
int64_t DimBlock(const DimIndex& dim, int64_t dim_extent, std::span<const int64_t> blocks);

}  // namespace kiln::runtime
