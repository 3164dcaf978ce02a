// Convolution layouts: the memory layout of the activations convolutions
// read and write, as XLA's TPU layout assignment chooses it. The MXU takes
// a convolution's input features along its contraction and writes its
// output features along the lanes, so both sit minor, and the spatial
// dimensions go major: a 7x7 feature map is then 49 rows of whole tiles
// instead of 7 rows padded to 8 and 7 lanes padded to 128 in every tile
// (18x the bytes), as torch_xla's NCHW arrays are laid out by default.
//
// The layout spreads to the values an activation is computed with, so a
// kernel does not transpose between its operands: the values joined by
// elementwise ops (same dimensions) form one group, and a group holding a
// convolution's input or output takes that convolution's layout (the first
// convolution in program order decides when two disagree). Within a group
// a value keeps its layout when it is pinned: a parameter, a computation's
// root, a layout written in the text, a value a bitcast, tuple, call, loop
// or custom call reads, or an op that is not a plain array computation.
// A convolution whose input is pinned in another layout reads a copy in its
// layout (a transposing kernel XLA inserts too, and times), shared by the
// convolutions that read the same value. An input laid out for another
// convolution is read as it lies: a weight gradient's convolution contracts
// the forward activations over their batch and takes them in the forward
// layout.
//
// Values are unchanged (the evaluator computes on logical indices; no
// bitcast reads a value whose layout changes). Fusion bodies are left
// alone; the caller skips them.
//
// Stateless; thread-safe across computations.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/shape.h"

namespace kiln::passes {

// The minor_to_major of a convolution activation of `shape` whose feature
// dimension is `feature` and batch dimension `batch`: the feature minor;
// the batch next (the TPU's {3,0,2,1} for NHWC) unless the most minor
// spatial dimension pads the memory tiles' rows less (a batch of 4 pads
// each tile's 8 rows to twice its data); the rest in logical order above.
std::vector<int64_t> FeatureMinorLayout(const hlo::Shape& shape, int64_t feature, int64_t batch);

// Lays out the convolution activations of `computation` (not a fusion
// body) and the values grouped with them; returns whether any layout
// changed or a copy was inserted. Fails only when the IR refuses an edit.
Result<bool> AssignConvolutionLayouts(hlo::Computation& computation);

}  // namespace kiln::passes
