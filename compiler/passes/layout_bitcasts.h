// LayoutBitcasts: a transpose, reshape or copy whose result holds exactly
// its operand's bytes in HBM, under both layouts and the chip's (sublane,
// 128) memory tiles, becomes a bitcast, as XLA's algebraic simplifier
// replaces such moves once layouts are assigned: no kernel, no buffer of
// its own, no time. Values are unchanged: the evaluator reads a bitcast's
// operand in its layout's memory order and the result in its own
// (runtime/eval), which for such a move is the move itself.
//
// Two exceptions: a move whose operand it alone reads, between two ops a
// loop fusion computes (elementwise, broadcast, data movement; its users
// may also be reductions), stays a move; so does one between a dot or
// convolution it alone reads and elementwise users (the contraction's
// epilogue). XLA fuses the bitcast into the
// kernel of both sides; kiln's fusion planner takes a bitcast for a buffer
// alias it cannot fuse through, so the move is kept for the planner to fuse
// (a scan body's dynamic-slice -> reshape -> convert is one kernel).
//
// Typical sources: JAX's scans transpose stacked weights into a layout
// that is their parameter's memory order (f32[128,126,53248]{2,1,0} ->
// f32[126,128,53248]{2,0,1}); sharding constraints lower to copies in the
// layout of their operand; reshapes add or drop dimensions of extent 1, or
// merge major dimensions above the two tiled ones.
//
// Stateless; thread-safe across modules.
#pragma once

#include "compiler/hlo/instruction.h"
#include "compiler/passes/pass.h"

namespace kiln::passes {

// Whether `instr` is a transpose, reshape or copy of an array whose result
// has the same bytes in memory as its operand: the same element type and
// layout tiles, and the same dimensions of extent over 1 in the same memory
// order (a transpose's mapped through its permutation; a reshape's in
// row-major memory order on both sides, with the same minor dimension,
// merging or splitting only dimensions above it, and the second-minor one
// either unchanged or a multiple of the sublane tile on both sides).
bool IsPhysicalNoOp(const hlo::Instruction& instr);

class LayoutBitcasts : public Pass {
 public:
  std::string_view name() const override { return "layout-bitcasts"; }
  Result<bool> Run(hlo::Module& module) override;
};

}  // namespace kiln::passes
