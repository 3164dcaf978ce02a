// Static trip counts of while loops, for timing without values.
//
// Recognizes what is cheap to prove: a `known_trip_count` in the loop's
// backend_config, and the counted loop XLA and JAX emit — a tuple element
// initialised with an integer constant, stepped by a constant in the body
// (add or subtract) and compared with a constant in the condition (LT, LE,
// GT, GE, NE). Anything else depends on data: the error says so and names
// the loop ("timing-only: while loop %w trip count depends on data").
//
// Pure function over an immutable module; thread-safe.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::runtime::timing {

Result<int64_t> StaticTripCount(const hlo::Instruction& while_op);

}  // namespace kiln::runtime::timing
