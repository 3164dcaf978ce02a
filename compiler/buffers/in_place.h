// In-place results, as XLA's buffer assignment makes them: a while loop's
// state takes over the buffers of its initial values that die at its
// kernel, and a dynamic-update-slice's result the buffer of the array it
// updates when that array dies there. A while's state elements its body
// passes through unchanged (read-only loop-carried values, such as a
// scan's weights) are not copied into its state whether or not they die
// there, as XLA's copy insertion leaves them: the loop reads them where
// their initial values lie, which then live as long as the loop's result
// is read. A result is then allocated only for the bytes it does not take
// over (Buffer::shared_bytes says how many it did). What it takes over is split off the dying buffer as a buffer of its
// own (same value, same definition) that lives as long as the result, or
// as whatever takes the result over in turn; the rest of the dying buffer
// is freed at its last reader as before.
//
// Pure function of its arguments; thread-safe.
#pragma once

#include <span>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/output_aliases.h"

namespace kiln::buffers {

// Applies in-place sharing to `out`, whose buffers and liveness (defined_at,
// last_use, kinds) are set and whose offsets are not placed yet; may append
// buffers (the pieces split off), which buffer_of does not name.
void ShareDyingOperands(const hlo::Computation& computation, const fusion::FusionPlan& plan, BufferAssignment& out);

// Results the module's input_output_alias lets the program write into a
// donated parameter's memory allocate nothing of their own (the parameter
// is counted already): a result value of its own (not the parameter passed
// through) no larger than the parameter. Aliases into a parameter's tuple
// elements, or naming what the computation does not have, are left alone.
void WriteOutputsInPlace(const hlo::Computation& computation, std::span<const OutputAlias> aliases,
                         BufferAssignment& out);

}  // namespace kiln::buffers
