// Whether a rescheduled executable computes what the reference does: the
// same kernels (matched one to one by name and HLO; the i-th of a repeated
// name to the i-th) run in another order, over buffers that buffer
// assignment redid for that order, so buffer indices and HBM offsets may
// differ. Both programs are executed symbolically: a parameter buffer holds
// its parameter (number and tuple path), a constant its literal, a kernel's
// output j the value "output j of that kernel"; writing a temporary makes
// every other temporary whose bytes overlap it unreadable (kernel results
// share the temporaries area, where offsets count; parameters and
// constants have memory of their own). It holds when every
// kernel reads only live values, each reading the same values as its
// reference kernel; the kernels with ordered effects (collectives, send,
// recv, infeed, outfeed, rng, custom-calls marked with a side effect) keep their relative order; and
// parameters, result shape and the values of the result arrays agree (as do
// the slice, replica count and global signature). Kernels are taken as
// deterministic functions of their HLO and inputs; tiling and estimates may
// differ. The tuner accepts a schedule it cannot evaluate only when this
// holds against the heuristic executable.
//
// Linear in kernels, buffers and HLO text, plus a logarithmic factor per
// buffer write and read for the overlap. Pure function; thread-safe; the
// caller owns both byte spans, which are only read during the call.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"

namespace kiln::autotune {

struct DataflowCheck {
  // Whether memory overlaps were checked: not when the reference's own
  // offsets make one of its reads overwritten (in-place results carry no
  // offset of their own); then values are compared buffer by buffer and
  // `memory_note` says where the reference's offsets failed.
  bool memory_checked = true;
  std::string memory_note;
};

// What was checked, or kFailedPrecondition naming the first difference (or
// the kernel that reads a value the reference itself never makes well
// defined); errors for bytes that are not a valid executable.
Result<DataflowCheck> SameDataflow(std::span<const uint8_t> reference, std::span<const uint8_t> candidate);

}  // namespace kiln::autotune
