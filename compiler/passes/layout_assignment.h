// LayoutAssignment: chooses memory layouts for the chip's (sublane, 128)
// memory tiles, as XLA's TPU layout assignment does, in two parts.
//
// Convolution activations and the values computed with them take feature-
// minor layouts (compiler/passes/convolution_layout.h).
//
// Values that only dots read get a layout whose two tiled dimensions hold
// data, as XLA keeps tiny dimensions out of the tiled pair.
//
// A value qualifies when it is an array written by a copy, transpose,
// convert or dot (ops that write any layout at no extra traffic), every
// user is a dot, it has XLA's default layout (a layout written in the text
// is kept), it is not a parameter or a computation's root, and its
// computation is not a fusion's body. Its second-minor tiled dimension is
// then replaced when it is shorter than one tile's rows (16 for bf16) and a
// more major dimension is not: that dimension moves next to the minor one.
// bf16[1,4096,8,1024] read by a dot becomes {3,1,2,0}: 4096 x 1024 tiles
// instead of 8 rows padded to 16 in every tile, and the dot's blocks are
// cut from whole rows.
//
// Values are unchanged (the evaluator computes on logical indices; only a
// bitcast reads memory order, and a bitcast is never a qualifying user or
// producer). Tiny minor dimensions, elementwise users and values that flow
// through control flow are left as written.
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
