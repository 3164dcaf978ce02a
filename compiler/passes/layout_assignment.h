// LayoutAssignment: chooses memory layouts for the chip's (sublane, 128)
// memory tiles, as XLA's TPU layout assignment does, in two parts.
//
// Convolution activations and the values computed with them take feature-
// minor layouts (compiler/passes/convolution_layout.h).
//
// The other values, by layout group (compiler/passes/layout_groups.h: the
// values elementwise ops compute together), get a layout whose two tiled
// dimensions hold data, as XLA keeps tiny dimensions out of the tiled pair.
// A group qualifies when every member may change (an array op's result,
// not a parameter or a computation's root, read only by array ops and
// reductions, with XLA's default layout: a layout written in the text is
// kept) and none is reshaped (a reshape that is a bitcast under the default
// layout would become a move). Its second-minor tiled dimension is then
// replaced when it is shorter than one tile's rows (16 for bf16) and a
// more major dimension is not: that dimension moves next to the minor one.
// bf16[2048,8,128] attention heads become {2,0,1}: 2048 x 128 tiles
// instead of 8 rows padded to 16 in every tile, and a dot's blocks are cut
// from whole rows.
//
// The state a while loop carries gets the same choice, in its init, body,
// condition and result alike (compiler/passes/loop_state_layout.h), before
// the groups of each computation are laid out.
//
// Values are unchanged (the evaluator computes on logical indices; only a
// bitcast reads memory order, and a value a bitcast reads is pinned). Tiny
// minor dimensions and values passed to calls, conditionals or custom calls
// are left as written. Fusion bodies are skipped: their parameters take the
// fusion's operands as laid out.
//
// Stateless; thread-safe across modules.
#pragma once

#include <optional>
#include <vector>

#include "compiler/hlo/shape.h"
#include "compiler/passes/pass.h"

namespace kiln::passes {

// The minor_to_major LayoutAssignment gives an array of `shape` (default
// layout assumed), or nullopt when its tiled dimensions already hold data.
std::optional<std::vector<int64_t>> DenserMinorToMajor(const hlo::Shape& shape);

class LayoutAssignment : public Pass {
 public:
  std::string_view name() const override { return "layout-assignment"; }
  Result<bool> Run(hlo::Module& module) override;
};

}  // namespace kiln::passes
