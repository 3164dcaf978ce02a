// Tiling: the block shapes, grid and VMEM footprint of one kernel.
//
// A kernel iterates over a space: the shape of its largest root (loop
// kernels), the operand of its reduction (input kernels; reduced dimensions
// are walked sequentially into f32 accumulators) or the (batch, M, N, K)
// GEMM of its dot or convolution (output kernels; a convolution is seen as
// its implicit GEMM). Every array the kernel reads or writes follows the
// space as the shared mapping says (runtime/chip/kernel_indexing.h: through
// transposes, broadcasts, reshapes, slices, reduces and the dot's
// dimension numbers), so its block is the slice of it one space block
// needs, and dimensions the mapping cannot place are taken whole.
// Convolution operands are read as GEMM panels ({bm, bk} and {bk, bn}).
// Blocks tile the blockable dimensions of the space (its two minor ones and
// any an array lays out among its tiled two) and stack whole tiles along
// the others, contiguously (runtime/chip/space_blocks.h). A block dimension is either the whole dimension or a multiple of
// the chip's layout tile: 128 lanes where some array has the dimension
// minor, else (8,128) rows for 32-bit types, (16,128) for 16-bit, (32,128)
// for 8-bit; GEMM blocks are multiples of the MXU size. Blocks are padded to
// whole tiles, as each array's layout orders its dimensions, when their
// bytes are counted. VMEM = 2 x (input + output blocks) for double
// buffering, plus accumulators. The largest candidate block that fits the
// scoped VMEM is chosen.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/block_layout.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"
#include "runtime/chip/op_kinds.h"

namespace kiln::fusion {

struct TilingOptions {
  int64_t scoped_vmem_bytes = 16 << 20;
  int64_t mxu_size = 128;
};

// What a kernel computes, as far as tiling is concerned.
struct TilingProblem {
  using Space = runtime::SpaceKind;  // runtime/chip/op_kinds.h
  Space space = Space::kUntiled;
  // kLoop, kReduce: the iteration shape; kContraction: the dot/conv output.
  const hlo::Instruction* anchor = nullptr;
  std::vector<const hlo::Instruction*> inputs;   // arrays read from HBM
  std::vector<const hlo::Instruction*> outputs;  // arrays written to HBM
  // A horizontal kernel: its parts share no grid, so it runs untiled on
  // whole arrays, which must fit the scoped VMEM together (single
  // buffered: read all, compute, write all).
  bool whole = false;
};

// The tiling problem of a kernel of `computation` (its instructions, roots
// and inputs index the computation).
TilingProblem MakeTilingProblem(const hlo::Computation& computation, const Kernel& kernel);

// The largest fitting tile, or an error naming the smallest VMEM the kernel
// needs: "kernel needs 18.5 MiB of VMEM even with the smallest blocks,
// scoped VMEM is 16.0 MiB". Untiled problems get an untiled choice.
Result<TileChoice> ChooseTile(const TilingProblem& problem, const TilingOptions& options);

// Every legal tile of the problem: each candidate block ChooseTile
// considers that fits the scoped VMEM, largest first, so front() is
// ChooseTile's answer (for the autotuner's tile search). An untiled problem
// has one untiled candidate; the error is ChooseTile's when none fits.
Result<std::vector<TileChoice>> TileCandidates(const TilingProblem& problem,
                                               const TilingOptions& options);

// VMEM the kernel needs with its smallest candidate blocks; 0 for untiled
// problems.
int64_t MinimalVmemBytes(const TilingProblem& problem, const TilingOptions& options);

// What the planner checks before fusing: whether MinimalVmemBytes fits the
// scoped VMEM. A loop or reduce kernel whose arrays all fit whole fits
// without the indexing walk (planning a long chain checks every growing
// kernel); otherwise `needed`, when given, gets MinimalVmemBytes.
bool FitsScopedVmem(const TilingProblem& problem, const TilingOptions& options, int64_t* needed = nullptr);

// Checks an edited tile: one block per input and output, block dimensions
// within the arrays and aligned, VMEM recomputed and within the scoped
// VMEM; a whole problem's tile untiled, with its whole arrays' VMEM.
Status ValidateTile(const TilingProblem& problem, const TileChoice& tile,
                    const TilingOptions& options);

}  // namespace kiln::fusion
