// Arrays inside (possibly nested) tuple shapes and literals, in depth-first
// order: how an executable flattens parameters and results into buffers.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"

namespace kiln::runtime {

// The non-tuple shapes of `shape` in depth-first order (the shape itself
// when it is not a tuple).
std::vector<const hlo::Shape*> ShapeLeaves(const hlo::Shape& shape);

// Whether a value of shape `value` may stand where `declared` is expected:
// the same element type and rank, each dimension equal, or at most the bound
// where `declared` makes it dynamic (`<=N`). Layouts are ignored.
bool ValueFitsShape(const hlo::Shape& value, const hlo::Shape& declared);

// Moves the arrays of `literal` out in depth-first order.
void FlattenLiteral(hlo::Literal literal, std::vector<hlo::Literal>& out);

// Rebuilds a literal of `shape` from `leaves[next...]`, advancing `next`.
// An error when leaves run out or a leaf does not match its place.
Result<hlo::Literal> AssembleLiteral(const hlo::Shape& shape, std::vector<hlo::Literal>& leaves,
                                     size_t& next);

}  // namespace kiln::runtime
