// Whether two executables compute the same thing: the same kernels (HLO,
// buffers read and written, order), buffers, parameters and results, so
// that they give identical outputs on any inputs. Tiling, kernel estimates,
// the plan's name and compile time may differ: they steer timing only.
// The tuner accepts a candidate whose outputs cannot be evaluated only
// when this holds against the heuristic executable.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"

namespace kiln::autotune {

// Ok, or kFailedPrecondition naming the first difference; errors for bytes
// that are not a valid executable.
Status SameComputation(std::span<const uint8_t> reference, std::span<const uint8_t> candidate);

}  // namespace kiln::autotune
